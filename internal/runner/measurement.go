package runner

import (
	"context"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/gate/evidence"
	"github.com/loop-action/loop-action/internal/process"
)

// measurement is the gate's ruling on one measurement of the loop root:
// the verdicts (void ones when it cannot count) and the snapshot they are
// of.
type measurement struct {
	verdicts []gate.Verdict
	snapshot string
	void     string // why it cannot count, if it cannot
}

// measure collects evidence, adds the judges' answers and the review
// decisions, and lets the gate rule. It reports false when ctx ended first.
// First, whatever agents left running is killed (one thorough
// process.Sweep, which the collector is told about; when pending is not
// nil it was started already, sweepAhead, and its result is waited for),
// then ignored files created or changed since the session started are
// removed (uncarried.go). The guarded paths are compared before and after:
// if anything changed them meanwhile, or the iteration's waves left the
// root unfit, what was put back is recorded and the measurement is void.
func (r *iteration) measure(ctx context.Context, judges map[string]gate.JudgeResult, pending <-chan error) (measurement, bool) {
	swept := awaitSweep(pending)
	r.run.step("swept")
	r.scrubUncarried(ctx, swept)
	guard := r.w.baseline()
	ev := r.collect(ctx, swept)
	// The collector's Void (files no checkout of the snapshot reproduces)
	// is the workspace's doing, for agents to fix: it does not escalate.
	void := joinReasons(r.guardedWhileMeasuring(guard), ev.Void)
	if ctx.Err() != nil {
		return measurement{}, false
	}
	ev.Judges = judges
	ev.Decisions = r.cp.Decisions
	ev = evidence.Masked(ev, r.run.mask)
	verdicts := gate.Evaluate(r.cfg, ev)
	if void != "" {
		verdicts = voided(verdicts, void)
		r.recordVoid(void)
		if now, err := r.run.hasher.Snapshot(ctx); err == nil {
			ev.Snapshot = string(now) // what was put back, not what the checks saw
		}
	}
	return measurement{verdicts: verdicts, snapshot: ev.Snapshot, void: void}, true
}

// sweepAhead starts the thorough sweep (process.Sweep) that the
// measurement waits for before anything else (measure): right after
// the last wave's nodes have ended, so that it runs beside the runner's
// own steps that follow — recording the wave, its guard, publishing —
// which start no process and which a process left behind could just as
// well race if the sweep came after them. Nothing is weaker for it: the
// guard after the wave may see a rewrite or not, whatever the leftover
// wrote after its scan is compared by the guard after the measurement,
// which starts from that scan (watch.baseline); the ignored files are
// scrubbed, and the checks run, only once the sweep is done.
func sweepAhead() <-chan error {
	c := make(chan error, 1)
	go func() { c <- process.Sweep() }()
	return c
}

// awaitSweep is the result of the measurement's sweep: pending's, or
// that of a sweep made now.
func awaitSweep(pending <-chan error) error {
	if pending != nil {
		return <-pending
	}
	return process.Sweep()
}

// collect collects the evidence right after measure's sweep, whose result
// is swept: between the two only the runner's own scans and removals ran,
// which start no process, so the runner's own collector is spared a
// second sweep, and scans the guarded paths beside the snapshot
// (scanBeside). Any other collector sweeps for itself.
func (r *iteration) collect(ctx context.Context, swept error) gate.Evidence {
	c, ok := r.run.collector.(*evidence.Collector)
	if !ok {
		return r.run.collector.Collect(ctx, r.cfg)
	}
	mine := *c
	mine.Beside = r.w.scanBeside
	return mine.CollectSwept(ctx, r.cfg, swept)
}
