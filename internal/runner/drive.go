package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
)

// drive runs iterations until the run stops, pauses or is interrupted.
func (r *run) drive(parent context.Context) (Outcome, error) {
	ctx, cancel := r.wallContext(parent, 0)
	defer cancel()
	guards, cancelGuards := r.wallContext(parent, guardGrace)
	defer cancelGuards()
	r.ctx, r.guards = ctx, guards
	from := r.cp.Status
	fresh := r.cp.LedgerEvents == 0
	r.cp.Status, r.cp.StopDetail, r.cp.MaxIterations = state.Running, "", r.maxIter
	if fresh {
		r.rec.Record(ledger.Event{Type: ledger.RunStarted, MaxIterations: r.maxIter, Reason: r.generation})
		r.refreshStages()
	} else {
		r.rec.Record(ledger.Event{Type: ledger.RunResumed, Iteration: r.cp.Iteration, Status: string(from), MaxIterations: r.maxIter})
		if err := r.restore(ctx); err != nil {
			return outcome(r.cp, true, ""), err
		}
	}
	r.uncarriedBase(ctx) // the environment: before any agent of this session runs
	r.readMemory(ctx)
	if fresh || from == state.AwaitingReview {
		// Measure before dispatching anything: a workspace that already
		// meets its goals, or a review decided since the pause, needs no agent.
		m, ok := r.begin(r.cp.Iteration).measure(ctx, nil, nil)
		if !ok {
			return r.interrupted(ctx)
		}
		r.rule(r.cp.Iteration, m)
		r.record(r.cp.Iteration, m, dispatched{})
		if fresh { // the baseline progress is measured against
			r.cp.Signature = gate.Signature(r.cp.Verdicts)
		}
		r.refreshStages()
		if st, _ := r.stopReason(); st == state.Running {
			if err := r.save(ctx, ""); err != nil { // a kill in iteration 1 can resume
				return outcome(r.cp, true, ""), err
			}
		}
	}
	summary := "" // the last iteration's, until a checkpoint saves it
	for {
		if st, why := r.stopReason(); st != state.Running {
			return r.finish(ctx, st, why, summary)
		}
		var ok bool
		if summary, ok = r.iterate(ctx); !ok {
			return r.interrupted(ctx)
		}
		if st, _ := r.stopReason(); st == state.Running { // else finish saves it
			if err := r.save(ctx, summary); err != nil {
				return outcome(r.cp, true, ""), err
			}
			summary = ""
		}
	}
}

// restore puts the checkpoint's workspace back into the loop root when the
// store keeps one: a resume elsewhere continues from the builders' work,
// and a resume here drops what an interrupted iteration left half-done.
func (r *run) restore(ctx context.Context) error {
	rs, ok := r.opts.Store.(Restorer)
	if !ok {
		return nil
	}
	n, err := rs.Restore(ctx, r.cp.RunID)
	if errors.Is(err, state.ErrNotFound) { // stopped before its first checkpoint: no agent had run
		r.rec.Record(ledger.Event{Type: ledger.WorkspaceRestored, Iteration: r.cp.Iteration, Snapshot: r.cp.Snapshot,
			Reason: "the checkpoint keeps no workspace (the run was stopped before its first checkpoint): the loop root is used as it is"})
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore the workspace of run %q: %w", r.cp.RunID, err)
	}
	r.rec.Record(ledger.Event{Type: ledger.WorkspaceRestored, Iteration: r.cp.Iteration, Snapshot: r.cp.Snapshot,
		Reason: phrase.Plural(n, "path", "paths") + " changed"})
	return nil
}

// stopReason applies the stop ladder to the run as it stands; the first
// rule that matches wins. It returns state.Running when none does.
func (r *run) stopReason() (state.Status, string) {
	s, cp := r.cfg.Stop, r.cp
	switch {
	case gate.OverallSuccess(r.cfg, cp.Verdicts):
		return state.Success, "every blocking goal is satisfied"
	case gate.AwaitingReview(r.cfg, cp.Verdicts):
		return state.AwaitingReview, "only human review is left: loop-action review approve GOAL, then resume"
	case r.escalate != "":
		return state.Escalated, r.escalate
	case s.NoProgress > 0 && cp.Stale >= s.NoProgress:
		return state.NoProgress, fmt.Sprintf("%d iterations in a row without progress (no_progress = %d)", cp.Stale, s.NoProgress)
	case cp.Iteration >= r.maxIter:
		return state.IterationCap, fmt.Sprintf("%d of %d iterations used", cp.Iteration, r.maxIter)
	case s.MaxWallClock.IsSet() && r.wallUsed() >= s.MaxWallClock.Duration:
		return state.WallClock, fmt.Sprintf("wall clock %s used of %s", r.wallUsed().Round(1e9), s.MaxWallClock)
	case s.MaxTokens > 0 && cp.Spend.Tokens >= s.MaxTokens:
		return state.TokenBudget, fmt.Sprintf("%d tokens used of %d", cp.Spend.Tokens, s.MaxTokens)
	case s.MaxCostUSD > 0 && cp.Spend.CostUSD >= s.MaxCostUSD:
		return state.CostBudget, fmt.Sprintf("$%.4f used of $%.2f", cp.Spend.CostUSD, s.MaxCostUSD)
	}
	return state.Running, ""
}

// interrupted ends a run whose context was cancelled mid-iteration: the
// in-flight iteration is dropped (its spend is kept) and the checkpoint is
// saved. Out of wall clock, the run stops by budget; otherwise it was
// cancelled, which is quiet: no escalation, no error.
//
// The save reads nothing of the loop root (state.Commit.Interrupted): the
// walk that was interrupted may be one that no time would have been
// enough for (a sparse terabyte under a raised run.max_file_size), and a
// stopped run must end promptly. It keeps the workspace the last
// checkpoint stored, which is what the iteration started from; a run
// stopped before its first checkpoint stores none (no agent has run).
func (r *run) interrupted(ctx context.Context) (Outcome, error) {
	r.interrupt = true
	if errors.Is(context.Cause(ctx), errWallClock) {
		return r.finish(ctx, state.WallClock, fmt.Sprintf("wall clock %s spent during iteration %d", r.cfg.Stop.MaxWallClock, r.cp.Iteration+1), "")
	}
	return r.finish(ctx, state.Cancelled, fmt.Sprintf("cancelled during iteration %d; resume to continue", r.cp.Iteration+1), "")
}

// finish records why the run stopped and saves the checkpoint, with the
// summary of the iteration that ended, if not saved yet. On success it
// writes the success export first, so that a committed success always has
// its export.
func (r *run) finish(ctx context.Context, st state.Status, why, summary string) (Outcome, error) {
	r.cp.Status, r.cp.StopDetail = st, why
	r.rec.Record(ledger.Event{Type: ledger.StopTriggered, Iteration: r.cp.Iteration, Status: string(st), Reason: why})
	sp := r.cp.Spend
	r.rec.Record(ledger.Event{Type: ledger.RunFinished, Iteration: r.cp.Iteration, Status: string(st),
		Tokens: sp.Tokens, Estimated: sp.Estimated, CostUSD: sp.CostUSD})
	var path string
	var exportErr error
	if st == state.Success {
		path, exportErr = r.export(ctx, summary)
	}
	r.leave = r.remember(st)
	if r.iso != nil && !st.Resumable() {
		if err := r.iso.Remove(); err != nil {
			r.logf("remove the worktrees: %v", err)
		}
	}
	if err := r.save(ctx, summary); err != nil {
		return outcome(r.cp, true, ""), err
	}
	return outcome(r.cp, true, path), exportErr
}

// export writes the success export and records it; summary is that of
// the last iteration, when no checkpoint saved it yet.
func (r *run) export(ctx context.Context, summary string) (string, error) {
	r.cp.UpdatedAt = r.now().UTC()
	path, err := r.writeExport(ctx, summary)
	if err != nil {
		return "", fmt.Errorf("write the success export: %w", err)
	}
	r.rec.Record(ledger.Event{Type: ledger.ExportWritten, Iteration: r.cp.Iteration, Path: relative(r.opts.Root, path)})
	return path, nil
}

// save commits the checkpoint with everything recorded since the last
// save and the summary of the iteration it ends, if any. It is never
// cancelled: a stopping run must still save.
func (r *run) save(ctx context.Context, summary string) error {
	r.cp.Spend.WallClock = r.wallUsed()
	r.cp.UpdatedAt = r.now().UTC()
	r.rec.Record(ledger.Event{Type: ledger.CheckpointSaved, Iteration: r.cp.Iteration, Status: string(r.cp.Status)})
	led, log, n := r.rec.Take()
	c := state.Commit{Ledger: led, Events: n, Log: log, Summary: summary,
		KeepWorkspace: r.finished || (r.interrupt && r.stored), Interrupted: r.interrupt, Memory: r.leave}
	r.attachRecording(&c)
	err := r.opts.Store.Save(context.WithoutCancel(ctx), r.cp, c)
	if err != nil {
		return fmt.Errorf("save checkpoint of run %q: %w", r.cp.RunID, err)
	}
	r.stored, r.leave, r.recording = r.stored || !r.interrupt, nil, nil
	if r.opts.Checkpointed != nil {
		r.opts.Checkpointed(r.cp)
	}
	return nil
}
