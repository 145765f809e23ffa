package action

import (
	"context"
	"fmt"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// mayPush says why /loop push cannot deliver the run, or nil: it pushes
// the work of a run that succeeded, when this workflow's deliver only
// posts it (comment) or keeps it (none), and only once.
func mayPush(deliver string, cp *state.Checkpoint) error {
	switch d := cp.Delivery; {
	case deliver != DeliverNone && deliver != DeliverComment:
		return fmt.Errorf("/loop push is for `deliver: comment` or `deliver: none`; with `deliver: %s` the loop delivers certified work itself", deliver)
	case cp.Status != state.Success:
		return fmt.Errorf("the run has not succeeded (it is %s): nothing is certified to push", cp.Status)
	case d != nil && (d.Outcome == outcomePushed || d.Outcome == outcomePushing):
		return fmt.Errorf("this run's fix was already pushed: %s to %s", phrase.Short(d.SHA), Verbatim(d.Ref))
	}
	return nil
}

// pushCommand delivers, on /loop push, the workspace the run certified
// onto the pull request's branch, as deliver: push would have. The
// workspace is restored from the state branch, and measured again in this
// job: a success read from the state branch certifies nothing on its own.
// A loop with judge checks cannot be pushed this way (judges only rule in
// a run).
func (j *job) pushCommand(ctx context.Context, s *session) error {
	cp := s.run.Checkpoint()
	if err := restoreCertified(ctx, s); err != nil {
		return err
	}
	verdicts, snap, err := j.measureNow(ctx, s, cp.Decisions)
	if err != nil {
		return err
	}
	out := runner.OutcomeOf(cp)
	out.Verdicts = verdicts
	f := j.facts(s, fromPush, DeliverPush)
	f.measured, f.success = snap, gate.OverallSuccess(s.cfg, verdicts)
	if f.measured == cp.Snapshot && f.success && f.git {
		j.readHead(s, &f)
	}
	dv := j.settle(ctx, s, f, delivery{mode: DeliverPush, out: out})
	if err := j.pub().report(ctx, s, dv.out, dv, nil, true); err != nil {
		return err
	}
	return j.in.unsuccessful(dv.out, dv)
}

// restoreCertified puts the workspace of the run's last checkpoint back
// into the loop root, when the store keeps workspaces (the state branch).
func restoreCertified(ctx context.Context, s *session) error {
	rs, ok := s.store.(runner.Restorer)
	if !ok {
		return nil
	}
	if _, err := rs.Restore(ctx, s.runID); err != nil {
		return fmt.Errorf("restore the certified workspace of run %q: %w", s.runID, err)
	}
	return nil
}
