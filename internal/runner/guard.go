package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/phrase"
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

// scanBeside is the collector's Beside (run.go): it scans the guarded
// paths as the measurement's checks left them, while the snapshot is
// taken, for the revert that follows the measurement (scanNow).
func (r *iteration) scanBeside() {
	s := r.guarded().scan()
	r.beside = &s
}

// scanNow scans the guarded paths g, or takes the scan scanBeside made
// during the measurement that just ended, once: nothing ran since but the
// snapshot, which only reads.
func (r *iteration) scanNow(g guarded) guardState {
	if s := r.beside; s != nil {
		r.beside = nil
		return *s
	}
	return g.scan()
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
// hold afterwards is kept in r.settled: the scan revert took when nothing
// changed, before when everything changed was put back, nothing when
// anything could not be read or put back.
func (r *iteration) revert(it int, nodes []string, before guardState, during string) reverted {
	r.settled = nil
	rv := r.revertTo(it, nodes, before, during)
	if !rv.any() {
		r.settled = &rv.now
	} else if len(rv.failed) == 0 {
		r.settled = &before
	}
	return rv
}

// revertTo is revert but for r.settled.
func (r *iteration) revertTo(it int, nodes []string, before guardState, during string) reverted {
	var rv reverted
	if before.err != nil {
		rv.failed = append(rv.failed, "the guarded paths could not be read before: "+before.err.Error())
		return rv
	}
	g := r.guarded()
	now := r.scanNow(g)
	if now.err != nil {
		rv.failed = append(rv.failed, "the guarded paths could not be read: "+now.err.Error())
		return rv
	}
	rv.now = now
	w, err := workspace.OpenWriter(g.root)
	if err != nil {
		rv.failed = append(rv.failed, err.Error())
		return rv
	}
	defer w.Close()
	for _, rel := range sortedKeys(before.files, now.files) {
		was, had := before.files[rel]
		is, has := now.files[rel]
		if what := change(was, had, is, has); what != "" {
			r.revertOne(w, it, nodes, rel, was, had, what+during, &rv)
		}
	}
	return rv
}

// revertOne puts rel back as it was and records it.
func (r *iteration) revertOne(w *workspace.Writer, it int, nodes []string, rel string, was workspace.Entry, had bool, what string, rv *reverted) {
	note, err := putBack(w, rel, was, had)
	what += note
	if err != nil {
		what += "; putting it back failed: " + err.Error()
		rv.failed = append(rv.failed, rel+": "+err.Error())
	}
	typ := ledger.ProtectedReverted
	if isGit(rel) {
		typ, rv.git = ledger.GitReverted, append(rv.git, rel)
	} else {
		rv.protected = append(rv.protected, rel)
	}
	r.rec.Record(ledger.Event{Type: typ, Iteration: it, Path: rel, Nodes: nodes, Reason: what})
}

// change says how a path changed, or "" when it did not.
func change(was workspace.Entry, had bool, is workspace.Entry, has bool) string {
	switch {
	case had && !has:
		return "deleted"
	case !had && has:
		return "created"
	case was.Equal(is):
		return ""
	case was.Mode.Type() != is.Mode.Type():
		return "replaced by " + is.Kind()
	case was.Mode.IsRegular() && was.Size == is.Size && was.Sum == is.Sum:
		return "mode changed"
	}
	return "modified"
}

// putBack makes rel what it was: removed when it was not there, else
// written through w, which never follows a link. It says which parents
// had to be made directories again.
func putBack(w *workspace.Writer, rel string, was workspace.Entry, had bool) (string, error) {
	if !had {
		err := w.Remove(rel)
		if errors.Is(err, workspace.ErrParent) {
			// A parent was put back as a file or link just before: rel is
			// no longer a path of the tree.
			if _, ok, lerr := w.Lookup(rel); lerr == nil && !ok {
				err = nil
			}
		}
		return "", err
	}
	replaced, err := w.Put(rel, was)
	var notes []string
	for _, p := range replaced {
		what := "was " + kindText(p)
		notes = append(notes, fmt.Sprintf("%s %s and is a directory again", p.Path, what))
	}
	if len(notes) == 0 {
		return "", err
	}
	return "; " + strings.Join(notes, "; "), err
}

func kindText(p workspace.Replaced) string {
	k := workspace.Entry{Mode: p.Mode}.Kind()
	if p.Target != "" {
		k += " to " + p.Target
	}
	return k
}

func sortedKeys[V any](a, b map[string]V) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// nodeFailed counts a failure the runner found in a wave's changes, and
// escalates when failures reach max_node_failures.
// guardsStopped reports whether the guards' context ended (a signal, or
// the wall-clock deadline and its grace) before they could finish — then
// failed, and rootErr, say why — and logs what is left: the iteration is
// dropped, and it counts no node failure (a stopped run is quiet), but
// what its agents changed in guarded paths may still be there, as after a
// kill.
func (r *iteration) guardsStopped(failed []string, rootErr string) bool {
	if r.guardContext().Err() == nil || (len(failed) == 0 && rootErr == "") {
		return false
	}
	why := slices.Clone(failed)
	if rootErr != "" {
		why = append(why, rootErr)
	}
	r.logf("the run stopped before its guards could put back what the wave changed in guarded paths (%s); a resume restores the checkpoint's workspace from a branch: store, or start it again from a clean checkout",
		strings.Join(why, "; "))
	return true
}

func (r *run) nodeFailed(why string) {
	r.cp.NodeFailures++
	if max := r.cfg.Stop.MaxNodeFailures; max > 0 && r.cp.NodeFailures >= max && r.escalate == "" {
		r.escalate = fmt.Sprintf("%s (max_node_failures = %d) after %s", phrase.Plural(r.cp.NodeFailures, "node failure", "node failures"), max, why)
	}
}
