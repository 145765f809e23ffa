package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/gate/evidence"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
	"github.com/loop-action/loop-action/internal/state"
)

// iteration is what one iteration holds while it runs, from its waves to
// its ruling: made anew for each (begin), so nothing of one reaches the
// next but through the checkpoint.
type iteration struct {
	run      *run
	cfg      *loop.Config
	cp       *state.Checkpoint
	rec      *ledger.Recorder
	n        int
	void     []string // why the measurement cannot count
	scrubbed []string // ignored paths removed before the measurement
	w        *watch   // the guarded paths through the iteration (guard.go)
}

// begin starts iteration n (or, for the measurement before the first
// iteration, the one that has ended).
func (r *run) begin(n int) *iteration {
	return &iteration{run: r, cfg: r.cfg, cp: r.cp, rec: r.rec, n: n, w: &watch{guarded: r.guarded(), rec: r.rec}}
}

// iterate runs one iteration: context, waves, evidence, gate, summary,
// history, revisions, progress signature and stages. It reports false when
// the run's context ended before the gate could rule; the iteration then
// does not count.
func (r *run) iterate(ctx context.Context) bool {
	it := r.cp.Iteration + 1
	r.rec.Record(ledger.Event{Type: ledger.IterationStarted, Iteration: it, MaxIterations: r.maxIter})
	if r.iso != nil {
		r.iso.BeginIteration()
	}
	x := r.begin(it)
	before := r.cp.Verdicts
	spent := r.cp.Spend
	p := r.perturbation(it)
	d := x.dispatch(ctx, it, p)
	if ctx.Err() != nil {
		if d.swept != nil {
			<-d.swept // no sweep outlives the iteration
		}
		return false
	}
	if !x.measure(ctx, d.judges, d.swept) {
		return false
	}
	r.cp.Iteration = it
	r.spendRevisions(d.ranBuilders)
	r.progress()
	closed := r.refreshStages()
	r.summary = r.mask(x.summarize(d, before, closed, spent)) // it lists paths agents named
	r.appendHistory(r.summary)
	r.carry(r.summary)
	return true
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
func (r *iteration) measure(ctx context.Context, judges map[string]gate.JudgeResult, pending <-chan error) bool {
	it := r.n
	swept := awaitSweep(pending)
	r.run.step("swept")
	r.scrubUncarried(ctx, it, swept)
	guard := r.w.baseline()
	ev := r.collect(ctx, swept)
	void := withVoid(r.guardedWhileMeasuring(it, guard), ev.Void)
	if ctx.Err() != nil {
		return false
	}
	ev.Judges = judges
	ev.Decisions = r.cp.Decisions
	ev = evidence.Masked(ev, r.run.mask)
	verdicts := gate.Evaluate(r.cfg, ev)
	if void != "" {
		verdicts = voided(verdicts, void)
		r.recordVoid(it, void)
		if now, err := r.run.hasher.Snapshot(ctx); err == nil {
			ev.Snapshot = string(now) // what was put back, not what the checks saw
		}
	}
	r.record(it, verdicts, ev.Snapshot)
	r.cp.Verdicts, r.cp.Snapshot = verdicts, ev.Snapshot
	return true
}

// sweepAhead starts the thorough sweep (process.Sweep) that the
// measurement waits for before anything else (measureSwept): right after
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

// sweptCollector is a Collector that can skip its own first sweep when
// told what the caller's returned (evidence.Collector.CollectSwept).
type sweptCollector interface {
	CollectSwept(ctx context.Context, cfg *loop.Config, swept error) gate.Evidence
}

// collect collects the evidence right after measure's sweep, whose result
// is swept: between the two only the runner's own scans and removals ran,
// which start no process, so a collector that can is spared a second
// sweep; any other sweeps for itself. The runner's own collector scans the
// guarded paths beside the snapshot (scanBeside).
func (r *iteration) collect(ctx context.Context, swept error) gate.Evidence {
	if c, ok := r.run.collector.(*evidence.Collector); ok && c.Beside == nil {
		mine := *c
		mine.Beside = r.w.scanBeside
		return mine.CollectSwept(ctx, r.cfg, swept)
	}
	if c, ok := r.run.collector.(sweptCollector); ok {
		return c.CollectSwept(ctx, r.cfg, swept)
	}
	return r.run.collector.Collect(ctx, r.cfg)
}

// record writes the gate's ruling to the ledger: goals newly satisfied,
// goals revoked, reviews requested, and the ruling itself.
func (r *iteration) record(it int, verdicts []gate.Verdict, snapshot string) {
	before := map[string]gate.Verdict{}
	for _, v := range r.cp.Verdicts {
		before[v.Goal] = v
	}
	satisfied, passed, checks := 0, 0, 0
	for _, v := range verdicts {
		passed, checks = passed+v.Passed, checks+v.Total
		was, had := before[v.Goal]
		switch {
		case v.Satisfied && (!had || !was.Satisfied):
			r.rec.Record(ledger.Event{Type: ledger.GoalSatisfied, Iteration: it, Goal: v.Goal})
		case !v.Satisfied && had && was.Satisfied:
			r.rec.Record(ledger.Event{Type: ledger.GoalRevoked, Iteration: it, Goal: v.Goal, Reason: firstFailure(v)})
		}
		if v.Satisfied {
			satisfied++
		}
		for _, c := range v.Checks {
			if c.ReviewRequested && !requested(was, c.Index, snapshot, r.cp.Snapshot) {
				r.rec.Record(ledger.Event{Type: ledger.ReviewRequested, Iteration: it, Goal: v.Goal, Snapshot: snapshot, Reason: c.Evidence})
			}
		}
	}
	r.rec.Record(ledger.Event{Type: ledger.GateEvaluated, Iteration: it, Satisfied: satisfied, Goals: len(verdicts),
		Passed: passed, Checks: checks, Signature: gate.Signature(verdicts)})
}

// requested reports whether the same review was already requested for the
// same snapshot, so that a pause is announced once.
func requested(was gate.Verdict, index int, snapshot, lastSnapshot string) bool {
	if snapshot != lastSnapshot || index >= len(was.Checks) {
		return false
	}
	return was.Checks[index].ReviewRequested
}

// firstFailure is the evidence of a goal's first check that does not pass.
func firstFailure(v gate.Verdict) string {
	for _, c := range v.Checks {
		if c.Status != gate.Pass {
			return c.Evidence
		}
	}
	return ""
}

// spendRevisions charges one revision to each builder that ran while one
// of its goals is still unsatisfied.
func (r *run) spendRevisions(ran []string) {
	for _, name := range ran {
		n, _ := r.cfg.Node(name)
		if slices.ContainsFunc(n.Goals, func(g string) bool { return !satisfied(r.cp.Verdicts, g) }) {
			r.cp.Revisions[name]++
		}
	}
}

func satisfied(verdicts []gate.Verdict, goal string) bool {
	for _, v := range verdicts {
		if v.Goal == goal {
			return v.Satisfied
		}
	}
	return false
}

// progress updates the progress signature and the count of iterations in
// a row that did not change it.
func (r *run) progress() {
	sig := gate.Signature(r.cp.Verdicts)
	if sig == r.cp.Signature {
		r.cp.Stale++
	} else {
		r.cp.Stale = 0
	}
	r.cp.Signature = sig
}

// carry keeps the latest summaries for the next prompts.
func (r *run) carry(summary string) {
	n := r.cfg.Context.CarrySummaries
	r.cp.Summaries = append(r.cp.Summaries, summary)
	if len(r.cp.Summaries) > n {
		r.cp.Summaries = slices.Clone(r.cp.Summaries[len(r.cp.Summaries)-n:])
	}
}

// appendHistory adds the summary to the run's history file, the compact
// record of every attempt that builders are pointed at. It is a
// convenience copy (the store keeps the summaries), so a failure to write
// it is logged, not fatal.
func (r *run) appendHistory(summary string) {
	if err := os.MkdirAll(filepath.Dir(r.history), 0o755); err == nil {
		f, err := os.OpenFile(r.history, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.WriteString(summary + "\n")
			err = errors.Join(err, f.Close())
		}
		if err == nil {
			return
		}
		r.logf("history file %q: %v", r.history, err)
	}
}

// refreshStages closes open stages whose goals are all satisfied and opens
// the stages whose predecessors have all closed, until nothing changes.
// It returns the stages closed.
func (r *run) refreshStages() []string {
	var closed []string
	for changed := true; changed; {
		changed = false
		for _, st := range r.cfg.Stages {
			switch r.cp.Stages[st.Name] {
			case "open":
				if allSatisfied(r.cp.Verdicts, r.cfg.StageGoals(st.Name)) && len(r.cp.Verdicts) > 0 {
					r.cp.Stages[st.Name], changed = "closed", true
					closed = append(closed, st.Name)
					r.rec.Record(ledger.Event{Type: ledger.StageClosed, Iteration: r.cp.Iteration, Stage: st.Name})
				}
			case "closed":
			default:
				if afterClosed(r.cp.Stages, st) {
					r.cp.Stages[st.Name], changed = "open", true
					r.rec.Record(ledger.Event{Type: ledger.StageOpened, Iteration: r.cp.Iteration, Stage: st.Name})
				}
			}
		}
	}
	return closed
}

func allSatisfied(verdicts []gate.Verdict, goals []string) bool {
	for _, g := range goals {
		if !satisfied(verdicts, g) {
			return false
		}
	}
	return len(goals) > 0
}

func afterClosed(stages map[string]string, st loop.Stage) bool {
	for _, a := range st.After {
		if stages[a] != "closed" {
			return false
		}
	}
	return true
}
