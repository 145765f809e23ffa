package runner

import (
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The gate rules on what the runner measured; that only means something
// if what was measured is what the config describes. A measurement during
// which a guarded path changed (a check ran code an agent wrote, and that
// code rewrote a test or planted a git hook), or after a wave whose
// changes could not be put back, is void: every check of it fails, so no
// goal is satisfied by it and the run cannot succeed on it.

// unfit records why the current iteration's measurement cannot count, and
// escalates the run: what could not be put back may still be there at
// the next measurement.
func (r *iteration) unfit(why string) {
	r.void = append(r.void, why)
	if r.run.escalate == "" {
		r.run.escalate = why
	}
}

// guardedWhileMeasuring puts back what changed in the guarded paths since
// before was taken, while the evidence was collected, and says why the
// measurement is void, or "".
func (r *iteration) guardedWhileMeasuring(before guardState) string {
	rv := r.w.revert(r.n, nil, before, " while the evidence was collected")
	if r.guardsStopped(rv.failed, "") {
		return "the run stopped before the guarded paths were checked after measuring"
	}
	if len(rv.failed) > 0 {
		r.unfit("guarded paths could not be put back after measuring: " + strings.Join(rv.failed, "; "))
	}
	if rv.any() {
		r.nodeFailed("guarded paths changed while the evidence was collected")
	}
	reasons := slices.Clone(r.void)
	if paths := rv.paths(); len(paths) > 0 {
		reasons = append([]string{listed(paths) + " changed while the evidence was collected (put back)"}, reasons...)
	}
	return strings.Join(reasons, "; ")
}

// checkout is how the run's snapshots read the loop root: with its git
// settings (opts.Checkout), the config's run.max_file_size, and the
// commit the run started from as the base, when known (the tree a
// checkout's index holds), else the root's HEAD.
func checkout(opts Options) workspace.Checkout {
	k := opts.Checkout
	k.MaxFileSize = opts.Config.Run.MaxFileSize.Bytes
	if opts.Commit != "" {
		k.Base = workspace.CommitBase(opts.Root, opts.Commit)
	}
	return k
}

// joinReasons joins the reasons that are not "" with "; ".
func joinReasons(reasons ...string) string {
	return strings.Join(slices.DeleteFunc(reasons, func(s string) bool { return s == "" }), "; ")
}

// voided fails every check of every goal with why, keeping what was
// measured in the evidence line. It only ever takes success away.
func voided(verdicts []gate.Verdict, why string) []gate.Verdict {
	out := make([]gate.Verdict, len(verdicts))
	for i, v := range verdicts {
		v.Checks = slices.Clone(v.Checks)
		for j := range v.Checks {
			c := &v.Checks[j]
			c.Status, c.ReviewRequested = gate.Fail, false
			c.Evidence = "measurement void: " + why + "; measured: " + c.Evidence
		}
		v.Passed, v.Satisfied = 0, false
		out[i] = v
	}
	return out
}

// recordVoid records that the measurement of iteration it is void.
func (r *iteration) recordVoid(why string) {
	r.rec.Record(ledger.Event{Type: ledger.MeasurementVoid, Iteration: r.n, Reason: why})
}
