package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

type reviewCmd struct {
	Approve approveCmd `cmd:"" help:"Approve a goal's manual review for the workspace as it is now."`
	Reject  rejectCmd  `cmd:"" help:"Reject a goal's manual review, with a reason the builders will see."`
}

type approveCmd struct {
	reviewDecision `embed:""`
}

func (c *approveCmd) Run(cl *cli, d *deps) error { return c.decide(cl, d, true) }

type rejectCmd struct {
	reviewDecision `embed:""`
}

func (c *rejectCmd) Run(cl *cli, d *deps) error { return c.decide(cl, d, false) }

type reviewDecision struct {
	Goal   string `arg:"" help:"The goal whose manual checks are decided."`
	RunID  string `name:"run-id" placeholder:"ID" help:"Run (default: the most recently updated run)."`
	Reason string `placeholder:"TEXT" help:"Why (required to reject)."`
	By     string `placeholder:"NAME" help:"Who decides (default: $USER)."`
}

func (reviewDecision) Help() string {
	return `Records a decision bound to the current workspace snapshot: any later change
to the workspace re-opens the review. Then resume the run.

Example:
  loop-action review approve ui-approved
  loop-action review reject ui-approved --reason "the header overlaps on mobile"`
}

// decide records the decision on the run's checkpoint.
func (r *reviewDecision) decide(cl *cli, d *deps, approve bool) error {
	if !approve && r.Reason == "" {
		return &usageError{errors.New("a rejection needs --reason: the builders are told why")}
	}
	cfg, err := cl.load(d)
	if err != nil {
		return err
	}
	if err := hasManual(cfg, r.Goal); err != nil {
		return &usageError{err}
	}
	store, cp, err := cl.openRun(d, r.RunID)
	if err != nil {
		return err
	}
	defer store.Close()
	unlock, err := store.Lock(cp.RunID)
	if err != nil {
		return lockError(cp.RunID, err)
	}
	defer unlock()
	if cp, err = store.Load(d.ctx, cp.RunID); err != nil { // again, under the lock
		return err
	}
	if cp.Snapshot == "" {
		return &usageError{fmt.Errorf("run %q has measured no workspace yet: there is nothing to review", cp.RunID)}
	}
	// The decision binds to the snapshot under review: the one the run
	// measured when it paused. If the workspace has changed since, resume
	// re-opens the review for the new one.
	dec := gate.Decision{Goal: r.Goal, Approved: approve, By: r.by(d), Reason: r.Reason, Snapshot: cp.Snapshot}
	if err := record(d, store, cp, dec); err != nil {
		return err
	}
	if now, err := workspace.NewHasher(cl.root(d)).Snapshot(); err == nil && string(now) != cp.Snapshot {
		fmt.Fprintf(d.stderr, "note: the workspace has changed since snapshot %s was measured; resume will re-open the review for the new one\n", phrase.Short(cp.Snapshot))
	}
	return nil
}

func (r *reviewDecision) by(d *deps) string {
	if r.By != "" {
		return r.By
	}
	if u, ok := d.env.lookup("USER"); ok && u != "" {
		return u
	}
	return "local user"
}

// hasManual checks that the goal exists and has a manual check.
func hasManual(cfg *loop.Config, goal string) error {
	g, ok := cfg.Goal(goal)
	if !ok {
		return fmt.Errorf("no goal %q in %s", goal, cfg.File)
	}
	if !slices.ContainsFunc(g.Checks, func(c loop.Check) bool { return c.Type == loop.CheckManual }) {
		return fmt.Errorf("goal %q has no manual check to decide", goal)
	}
	return nil
}

// record appends the decision to the run and commits it with its event.
func record(d *deps, store state.Store, cp *state.Checkpoint, dec gate.Decision) error {
	a := runner.Amend(cp, d.now)
	a.Decide(dec)
	if err := a.Commit(d.ctx, store); err != nil {
		return err
	}
	verdict := "rejected"
	if dec.Approved {
		verdict = "approved"
	}
	_, err := fmt.Fprintf(d.stdout, "goal %s %s by %s for snapshot %s; run loop-action resume --run-id %s\n",
		dec.Goal, verdict, dec.By, phrase.Short(dec.Snapshot), cp.RunID)
	return err
}
