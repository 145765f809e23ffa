package runner

import (
	"context"
	"maps"
	"path"
	"slices"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The gate certifies a snapshot, and a snapshot leaves out what the
// ignore rules exclude (and nested .git directories, and fifos): no commit
// of it carries those files. A check that passes only thanks to such a
// file certifies a tree whose checkout fails. So the gate measures only
// what a commit can carry, in the environment the session started with:
// the uncarried entries present when the session started (dependencies
// the workflow installed, caches) are that environment; anything created
// there since, or changed (even replaced by a link or a fifo), is removed
// before every measurement. That includes what agents wrote and what the
// previous measurement's checks left (they run code agents wrote): only
// what the checks produce during a measurement counts for it, as it
// would after a fresh checkout. Entries of the environment that were
// deleted stay deleted: the checks regenerate them, or fail.

// uncarriedBase records the loop root's uncarried entries as the session
// starts, before any agent runs.
func (r *run) uncarriedBase(ctx context.Context) {
	r.uncarried, r.uncarriedErr = workspace.ScanUncarried(ctx, r.opts.Root)
}

// scrubUncarried removes what changed among the uncarried entries since
// the session started, recording each path, and makes the measurement
// void when it cannot tell or cannot remove one. The caller has just
// killed whatever agents left running (process.Sweep, whose error is
// swept), so nothing writes there once it is done.
func (r *iteration) scrubUncarried(ctx context.Context, swept error) {
	if swept != nil {
		r.unfit("processes agents started were still running before the ignored files were checked: " + swept.Error())
	}
	if r.run.uncarried == nil && r.run.uncarriedErr == nil {
		r.run.uncarriedBase(ctx) // a session that measures before any agent runs
		return
	}
	if r.run.uncarriedErr != nil {
		r.unfit("the ignored files of the loop root could not be listed when the session started: " + r.run.uncarriedErr.Error())
		return
	}
	now, err := workspace.ScanUncarried(ctx, r.run.opts.Root)
	if err != nil {
		r.unfit("the ignored files of the loop root could not be listed before measuring: " + err.Error())
		return
	}
	changes := r.run.uncarried.Changed(now)
	if len(changes) == 0 {
		return
	}
	r.w.settled = r.w.settled.without(pathsOf(changes)) // a removed path may be guarded
	if failed := r.removeUncarried(changes); len(failed) > 0 {
		r.unfit("ignored files that changed since the session started could not be removed before measuring: " + listed(failed))
	}
}

// removeUncarried removes each changed path (through the writer, which
// never follows a link) and records it (recordCapped). It
// returns the paths it could not remove.
func (r *iteration) removeUncarried(changes []workspace.UncarriedChange) []string {
	w, err := workspace.OpenWriter(r.run.opts.Root)
	if err != nil {
		return []string{err.Error()}
	}
	defer w.Close()
	var failed []string
	for i, c := range changes {
		what := c.What
		if err := w.Remove(c.Path); err != nil {
			what, failed = what+"; removing it failed: "+err.Error(), append(failed, c.Path)
		}
		recordCapped(r.rec, i, len(changes), "created or changed",
			ledger.Event{Type: ledger.UncarriedRemoved, Iteration: r.n, Path: c.Path, Reason: what})
	}
	r.scrubbed = append(r.scrubbed, pathsOf(changes)...)
	return slices.Clip(failed)
}

// without is s less the paths removed and everything below them: what a
// scan of the guarded paths would find once they are removed, if nothing
// else changed since s was taken. A new scan instead would take for the
// measurement's baseline whatever a process left behind wrote to a
// guarded path after the wave's guard and before the sweep killed it,
// which the guard after the measurement must find and put back. A path
// that could not be removed is dropped too: the measurement is void then,
// and the guard after it removes what is left.
func (s *guardState) without(removed []string) *guardState {
	if s == nil {
		return nil
	}
	gone := make(map[string]bool, len(removed))
	for _, p := range removed {
		gone[p] = true
	}
	out := &guardState{files: maps.Clone(s.files), err: s.err}
	for rel := range s.files {
		for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
			if gone[p] {
				delete(out.files, rel)
				break
			}
		}
	}
	return out
}

func pathsOf(changes []workspace.UncarriedChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Path
	}
	return out
}
