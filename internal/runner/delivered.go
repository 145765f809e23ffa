package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/state"
)

// RecordDelivery records in the run's checkpoint where the action
// delivered its work, and saves it, keeping the workspace the store holds.
// It is the one change a session makes after its run: the run is over
// (or paused), and the delivery is of what it left. The action calls it
// before a push (outcome "pushing") and after, so that a delivery in
// flight is known to the next job, and a generation delivers at most once.
func (s *Session) RecordDelivery(ctx context.Context, d state.Delivery) error {
	if s.cp == nil {
		return errors.New("runner: a run without a checkpoint has nothing to deliver")
	}
	if !s.cp.Status.Terminal() {
		return fmt.Errorf("runner: run %q is %s: only a run that stopped delivers", s.opts.RunID, s.cp.Status)
	}
	if !s.ran { // amendments first, with their events
		if err := s.Commit(ctx); err != nil {
			return err
		}
	}
	s.cp.Delivery = &d
	if err := s.opts.Store.Save(context.WithoutCancel(ctx), s.cp, state.Commit{KeepWorkspace: true}); err != nil {
		return fmt.Errorf("save the delivery of run %q: %w", s.cp.RunID, err)
	}
	return nil
}
