package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// A session amends its run between iterations, from outside any: review
// decisions, a stop, the last comment the action handled, a new
// generation. Each change is recorded with its event and kept in the
// session's checkpoint; Commit saves them together, and Run commits what
// is left before it runs.

// Decide records a review decision under the one review rule both faces
// apply (see PendingReview): it answers a review the run has pending, of
// the goal named or of the only goal with one, and it binds to the
// snapshot under review — the workspace the run measured when it paused,
// not the one the loop root holds now. r.By says who decided.
func (s *Session) Decide(r Review) (gate.Decision, error) {
	switch {
	case s.ran:
		return gate.Decision{}, s.afterRun()
	case s.cp == nil:
		return gate.Decision{}, fmt.Errorf("run %q has not measured anything yet: there is no review to decide", s.opts.RunID)
	case r.By == "":
		return gate.Decision{}, errors.New("a decision needs who made it")
	case !r.Approve && r.Reason == "":
		return gate.Decision{}, errors.New("a rejection needs a reason: the builders are told why")
	}
	goal, err := PendingReview(s.cp.Verdicts, r.Goal)
	if err != nil {
		return gate.Decision{}, err
	}
	if s.cp.Snapshot == "" { // a review is only requested with one: never here
		return gate.Decision{}, fmt.Errorf("run %q has measured no workspace: there is nothing to review", s.opts.RunID)
	}
	dec := gate.Decision{Goal: goal, Approved: r.Approve, By: r.By, Reason: r.Reason, Snapshot: s.cp.Snapshot, Comment: r.Comment}
	verdict := "rejected"
	if dec.Approved {
		verdict = "approved"
	}
	s.rec.Record(ledger.Event{Type: ledger.ReviewDecided, Iteration: s.cp.Iteration, Goal: dec.Goal, By: dec.By,
		Verdict: verdict, Snapshot: dec.Snapshot, Reason: dec.Reason})
	s.cp.Decisions = append(s.cp.Decisions, dec)
	s.changed = true
	return dec, nil
}

// Stop cancels a run that is not over: a quiet stop, resumable later.
func (s *Session) Stop(why string) error {
	switch {
	case s.ran:
		return s.afterRun()
	case s.cp == nil:
		return fmt.Errorf("run %q has not started: there is nothing to stop", s.opts.RunID)
	case s.cp.Status.Terminal():
		return fmt.Errorf("the run is already over (%s)", s.cp.Status)
	}
	s.cp.Status, s.cp.StopDetail = state.Cancelled, why
	s.rec.Record(ledger.Event{Type: ledger.StopTriggered, Iteration: s.cp.Iteration, Status: string(state.Cancelled), Reason: why})
	s.changed = true
	return nil
}

// HandledComment records that the action has handled the pull-request
// comments up to id, so that the next job starts after it. A run without
// a checkpoint keeps no such mark, and neither does a session that has run.
func (s *Session) HandledComment(id int64) {
	if s.ran || s.cp == nil || id <= s.cp.LastCommentID {
		return
	}
	s.cp.LastCommentID = id
	s.changed = true
}

// afterRun refuses an amendment once the session has run: amendments
// come before the run, which saves its own checkpoints.
func (s *Session) afterRun() error {
	return fmt.Errorf("runner: run %q was run in this session: amend it before running it", s.opts.RunID)
}

// NewGeneration has Run start the run afresh even though it has a
// checkpoint, for the reason why (recorded with run_started): the action
// starts one when a pull request's head moved to a commit the loop did not
// write. The comments already handled stay handled.
func (s *Session) NewGeneration(why string) { s.generation = why }

// Commit saves the amendments made since the last commit, if any, keeping
// the workspace the store holds for the run.
func (s *Session) Commit(ctx context.Context) error {
	if !s.changed {
		return nil
	}
	led, log, n := s.rec.Take()
	if err := s.opts.Store.Save(ctx, s.cp, state.Commit{Ledger: led, Events: n, Log: log, KeepWorkspace: true}); err != nil {
		return fmt.Errorf("save the amendments of run %q: %w", s.cp.RunID, err)
	}
	s.changed = false
	return nil
}
