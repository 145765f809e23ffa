package action

import (
	"errors"

	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// What Main returns, for the CLI to map to its exit codes (it is the only
// place that maps errors to exit codes): nil for success and for a pause
// for review, ErrUnsuccessful, a *UsageError or a *loop.ConfigError for
// what the job's setup got wrong, and any other error for an internal
// failure.

// ErrUnsuccessful reports a run that stopped without success while
// fail-on-unsuccessful is on: the job fails, without an error of its own.
var ErrUnsuccessful = errors.New("the loop stopped without success")

// UsageError is a mistake in how the job is set up rather than a failure
// of the action: an input, the event, where the loop config is.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// badSetup marks err as a mistake in the job's setup.
func badSetup(err error) error { return &UsageError{Err: err} }

// unsuccessful is the job's result: a commit certified in this job (the
// status rule's success), a pause for review, and a job that refuted
// nothing (see delivery.keep) pass; anything else fails when
// fail-on-unsuccessful is on — a run that converged but whose fix no
// commit carries yet among them.
func (in Inputs) unsuccessful(out runner.Outcome, dv delivery) error {
	if dv.success || dv.keep || out.Status == state.AwaitingReview || !in.FailOnUnsuccessful {
		return nil
	}
	return ErrUnsuccessful
}
