package main

import (
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

type statusCmd struct {
	runFlags `embed:""`
	JSON     bool `help:"Print the checkpoint as JSON."`
}

func (statusCmd) Help() string {
	return `Shows a run from its checkpoint without running anything: status and stop
reason, iterations, spend, each goal with its evidence, and the exact command
for any review that is waiting. Exit 0 when the run succeeded, 4 while it
awaits review, 1 otherwise.

Example:
  loop-action status
  loop-action status --run-id quickstart/local --json`
}

// Run shows the run by its last checkpoint, without holding it: a run in
// progress in another process can be looked at.
func (c *statusCmd) Run(cl *cli, d *deps) error {
	store, cp, err := c.openRun(cl, d)
	if err != nil {
		return err
	}
	defer store.Close()
	out := runner.OutcomeOf(cp)
	return finish(d, out.Status, c.JSON, cp, func() error { return writeStatus(d, cp, out) })
}

// runFlags name a run that exists: the flags of the commands that read or
// amend one.
type runFlags struct {
	storeFlags `embed:""`
	RunID      string `name:"run-id" placeholder:"ID" help:"Run (default: the most recently updated run)."`
}

// openRun opens the store and loads the run named, or the latest one, for
// the commands that read a run without holding it (status, ledger, export,
// apply).
func (f *runFlags) openRun(cl *cli, d *deps) (state.Store, *state.Checkpoint, error) {
	store, err := f.store(cl, d, workspace.Checkout{}) // it saves no workspace
	if err != nil {
		return nil, nil, err
	}
	id, err := namedRun(d, store, f.RunID)
	var cp *state.Checkpoint
	if err == nil {
		cp, err = store.Load(d.ctx, id)
	}
	if errors.Is(err, state.ErrNotFound) {
		err = &usageError{fmt.Errorf("no run %q", id)}
	}
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return store, cp, nil
}

// namedRun is the run id given, or else the latest run's: the one rule of
// every command that picks a run.
func namedRun(d *deps, store state.Store, id string) (string, error) {
	if id == "" {
		latest, err := store.Latest(d.ctx)
		if errors.Is(err, state.ErrNotFound) {
			return "", &usageError{errors.New("no runs yet: start one with loop-action run")}
		}
		if err != nil {
			return "", err
		}
		id = latest
	}
	if err := state.ValidRunID(id); err != nil {
		return "", &usageError{err}
	}
	return id, nil
}

func writeStatus(d *deps, cp *state.Checkpoint, out runner.Outcome) error {
	p := &printer{w: d.stdout}
	p.f("run %s (loop %q, %s)\n", cp.RunID, cp.Loop, cp.ConfigFile)
	p.f("  status: %s after %d of %d iterations\n", cp.Status, cp.Iteration, cp.MaxIterations)
	if cp.StopDetail != "" {
		p.f("  %s\n", cp.StopDetail)
	}
	p.f("  spend: %s\n", spendLine(cp.Spend))
	p.f("  stale iterations: %d; node failures: %d\n", cp.Stale, cp.NodeFailures)
	p.f("  started %s, updated %s\n\n", cp.StartedAt.Format("2006-01-02 15:04:05Z07:00"), cp.UpdatedAt.Format("2006-01-02 15:04:05Z07:00"))
	writeGoals(p, out)
	return p.err
}
