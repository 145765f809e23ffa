package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
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

// iterate runs one iteration: its plan and waves (dispatch), the
// measurement and the gate's ruling on it, then what the ruling changes
// (revisions, progress signature, stages) and the summary the next
// checkpoint saves, which it returns. It reports false when the run's
// context ended before the gate could rule; the iteration then does not
// count.
func (r *run) iterate(ctx context.Context) (string, bool) {
	it := r.cp.Iteration + 1
	r.rec.Record(ledger.Event{Type: ledger.IterationStarted, Iteration: it, MaxIterations: r.maxIter})
	if r.iso != nil {
		r.iso.BeginIteration()
	}
	x := r.begin(it)
	spent := r.cp.Spend
	d := x.dispatch(ctx, r.perturbation(it)) // the plan and the waves' outcomes
	if ctx.Err() != nil {
		if d.swept != nil {
			<-d.swept // no sweep outlives the iteration
		}
		return "", false
	}
	m, ok := x.measure(ctx, d.judges, d.swept)
	if !ok {
		return "", false
	}
	ru := r.rule(it, m)
	r.record(it, m, d)
	r.cp.Iteration = it
	r.spendRevisions(d.ranBuilders)
	r.progress()
	closed := r.refreshStages()
	summary := r.mask(x.summarize(d, ru, closed, spent)) // it lists paths agents named
	r.appendHistory(summary)
	r.carry(summary)
	return summary, true
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
