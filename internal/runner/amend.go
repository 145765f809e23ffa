package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// Amendment changes a run between its iterations, from outside a run:
// review decisions and stops, each with its ledger event, committed in
// one checkpoint. Hold the run's lock while amending it.
type Amendment struct {
	cp      *state.Checkpoint
	rec     *ledger.Recorder
	changed bool
}

// Amend starts an amendment of the run whose checkpoint is cp.
func Amend(cp *state.Checkpoint, now func() time.Time) *Amendment {
	return &Amendment{cp: cp, rec: ledger.NewRecorder(cp.LedgerEvents, now, nil)}
}

// Decide records a review decision.
func (a *Amendment) Decide(dec gate.Decision) {
	verdict := "rejected"
	if dec.Approved {
		verdict = "approved"
	}
	a.rec.Record(ledger.Event{Type: ledger.ReviewDecided, Iteration: a.cp.Iteration, Goal: dec.Goal, By: dec.By,
		Verdict: verdict, Snapshot: dec.Snapshot, Reason: dec.Reason})
	a.cp.Decisions = append(a.cp.Decisions, dec)
	a.changed = true
}

// Stop cancels a run that is not over: a quiet stop, resumable later.
func (a *Amendment) Stop(why string) {
	a.cp.Status, a.cp.StopDetail = state.Cancelled, why
	a.rec.Record(ledger.Event{Type: ledger.StopTriggered, Iteration: a.cp.Iteration, Status: string(state.Cancelled), Reason: why})
	a.changed = true
}

// Touch marks the checkpoint as changed without an event (for example the
// last comment the action handled).
func (a *Amendment) Touch() { a.changed = true }

// Commit saves the amended checkpoint, if anything changed.
func (a *Amendment) Commit(ctx context.Context, store Store) error {
	if !a.changed {
		return nil
	}
	led, log, n := a.rec.Take()
	return store.Save(ctx, a.cp, state.Commit{Ledger: led, Events: n, Log: log, KeepWorkspace: true})
}

// verifyDecisions has opts.VerifyDecisions check the decisions the loaded
// checkpoint carries; those it drops leave the run, each recorded with why.
func (r *run) verifyDecisions(ctx context.Context) error {
	if r.opts.VerifyDecisions == nil || len(r.cp.Decisions) == 0 {
		return nil
	}
	kept, dropped, err := r.opts.VerifyDecisions(ctx, r.cp.Decisions)
	if err != nil {
		return fmt.Errorf("verify the review decisions of run %q: %w", r.cp.RunID, err)
	}
	for _, d := range dropped {
		dec := d.Decision
		verdict := "rejection"
		if dec.Approved {
			verdict = "approval"
		}
		r.rec.Record(ledger.Event{Type: ledger.ReviewDropped, Iteration: r.cp.Iteration, Goal: dec.Goal, By: dec.By,
			Verdict: verdict, Snapshot: dec.Snapshot,
			Reason: fmt.Sprintf("%s of goal %q by %q for snapshot %q dropped: %s", verdict, dec.Goal, dec.By, dec.Snapshot[:min(7, len(dec.Snapshot))], d.Why)})
	}
	r.cp.Decisions = kept
	return nil
}
