package runner

import (
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/guard"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/workspace"
)

// guardState is what the guarded paths held at one moment.
type guardState struct {
	files map[string]workspace.Entry
	err   error // the scan failed: nothing can be compared with it
}

// scan records every guarded path: the protected files (without following
// links or opening named pipes) and the git configuration.
func (g guarded) scan() guardState {
	w, err := workspace.OpenWriter(g.root)
	if err != nil {
		return guardState{err: err}
	}
	defer w.Close()
	files, err := w.ScanCached(g.ctx, "", g.descend, g.protected, g.cache.files)
	if err == nil {
		err = scanGit(g.ctx, w, files, g.cache.git)
	}
	return guardState{files: files, err: err}
}

// watch guards the guarded paths through one iteration: it scans them,
// puts back what changed there, and remembers what they hold since, so
// that the next comparison starts from it.
type watch struct {
	guarded
	rec     *ledger.Recorder
	settled *guardState // what the guarded paths hold since the last revert, if known
	beside  *guardState // the guarded paths as the measurement's checks left them, scanned beside the snapshot
}

// scanBeside is the collector's Beside (iteration.collect): it scans the
// guarded paths as the measurement's checks left them, while the snapshot
// is taken, for the revert that follows the measurement (scanNow).
func (w *watch) scanBeside() {
	s := w.scan()
	w.beside = &s
}

// scanNow scans the guarded paths, or takes the scan scanBeside made
// during the measurement that just ended, once: nothing ran since but the
// snapshot, which only reads.
func (w *watch) scanNow() guardState {
	if s := w.beside; s != nil {
		w.beside = nil
		return *s
	}
	return w.scan()
}

// baseline is what the guarded paths hold as the measurement starts,
// which the guard after it compares with. When the guard after this
// iteration's last wave that ran a node knew what it left there
// (settled), that is it: since then only the runner's own steps ran
// (publishing, which never writes a guarded path; the sweep), so a new
// scan would find the same, except for what a process left behind wrote
// before the sweep killed it — which a new scan would take as the
// baseline, and which is now put back and voids the measurement. Ignored
// files the scrub removed just now, which may be guarded, are dropped
// from it (guardState.without). Otherwise (the measurement before any
// wave, a guard that could not put everything back) the paths are
// scanned anew.
func (w *watch) baseline() guardState {
	if s := w.settled; s != nil {
		w.settled = nil
		return *s
	}
	return w.scan()
}

// reverted is what putting the guarded paths back did.
type reverted struct {
	protected []string   // protected paths put back
	git       []string   // .git paths put back
	failed    []string   // why paths could not be put back
	now       guardState // what the guarded paths held before anything was put back
}

func (rv reverted) any() bool { return len(rv.protected)+len(rv.git)+len(rv.failed) > 0 }

// paths are every path put back or not, protected ones first.
func (rv reverted) paths() []string { return append(slices.Clone(rv.protected), rv.git...) }

// revert puts every guarded path that changed since before back as it
// was, and records each one: the nodes that may have changed it, and what
// happened (during says when, if not in a wave). What the guarded paths
// hold afterwards is kept in settled: the scan revert took when nothing
// changed, before when everything changed was put back, nothing when
// anything could not be read or put back.
func (w *watch) revert(it int, nodes []string, before guardState, during string) reverted {
	w.settled = nil
	var rv reverted
	if before.err != nil {
		rv.failed = append(rv.failed, "the guarded paths could not be read before: "+before.err.Error())
		return rv
	}
	now := w.scanNow()
	if now.err != nil {
		rv.failed = append(rv.failed, "the guarded paths could not be read: "+now.err.Error())
		return rv
	}
	rv = w.putBackChanged(it, nodes, before, now, during)
	rv.now = now
	switch {
	case !rv.any():
		w.settled = &rv.now
	case len(rv.failed) == 0:
		w.settled = &before
	}
	return rv
}

// putBackChanged puts back every path of before or now whose entry
// differs between the two (guard.Diff, guard.PutBack), and records each
// one.
func (w *watch) putBackChanged(it int, nodes []string, before, now guardState, during string) reverted {
	var rv reverted
	wr, err := workspace.OpenWriter(w.root)
	if err != nil {
		rv.failed = append(rv.failed, err.Error())
		return rv
	}
	defer wr.Close()
	for _, c := range guard.Diff(before.files, now.files) {
		note, err := guard.PutBack(wr, c)
		what := c.What + during + note
		if err != nil {
			what += "; putting it back failed: " + err.Error()
			rv.failed = append(rv.failed, c.Path+": "+err.Error())
		}
		typ := ledger.ProtectedReverted
		if isGit(c.Path) {
			typ, rv.git = ledger.GitReverted, append(rv.git, c.Path)
		} else {
			rv.protected = append(rv.protected, c.Path)
		}
		w.rec.Record(ledger.Event{Type: typ, Iteration: it, Path: c.Path, Nodes: nodes, Reason: what})
	}
	return rv
}

// guardsStopped reports whether the guards' context ended (a signal, or
// the wall-clock deadline and its grace) before they could finish — then
// failed, and rootErr, say why — and logs what is left: the iteration is
// dropped, and it counts no node failure (a stopped run is quiet), but
// what its agents changed in guarded paths may still be there, as after a
// kill.
func (r *iteration) guardsStopped(failed []string, rootErr string) bool {
	why := joinReasons(strings.Join(failed, "; "), rootErr)
	if r.run.guards.Err() == nil || why == "" {
		return false
	}
	r.run.logf("the run stopped before its guards could put back what the wave changed in guarded paths (%s); a resume restores the checkpoint's workspace from a branch: store, or start it again from a clean checkout", why)
	return true
}
