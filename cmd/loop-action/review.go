package main

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/workspace"
)

type reviewCmd struct {
	Approve approveCmd `cmd:"" help:"Approve a goal's pending review: binds to the snapshot under review, the workspace the run paused on."`
	Reject  rejectCmd  `cmd:"" help:"Reject a goal's pending review, with a reason the builders will see; binds to the snapshot under review."`
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
	runFlags `embed:""`
	Goal     string `arg:"" help:"The goal whose pending review is decided."`
	Reason   string `placeholder:"TEXT" help:"Why (required to reject)."`
	By       string `placeholder:"NAME" help:"Who decides (default: $USER)."`
}

func (reviewDecision) Help() string {
	return `Decides the review the run is waiting for: the goal must have a review
pending (loop-action status lists them). The decision binds to the snapshot
under review — the workspace the run measured when it paused, not the files
as they are now — so a workspace changed since re-opens the review when the
run resumes. Then resume the run. Without a pending review of the goal it
fails with exit 2.

Example:
  loop-action review approve ui-approved
  loop-action review reject ui-approved --reason "the header overlaps on mobile"`
}

// decide records the decision in a session on the run, under the review
// rule the action applies too (runner.Session.Decide).
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
	k, err := cl.checkout(d)
	if err != nil {
		return err
	}
	store, err := r.store(cl, d, checkoutOf(k, cfg))
	if err != nil {
		return err
	}
	defer store.Close()
	id, err := namedRun(d, store, r.RunID)
	if err != nil {
		return err
	}
	s, err := openSession(d, runner.Options{Config: cfg, Root: cl.root(d), RunID: id, Store: store, Env: d.env.vars, Now: d.now, Checkout: k})
	if err != nil {
		return err
	}
	defer s.Close()
	if s.Checkpoint() == nil {
		return &usageError{fmt.Errorf("no run %q", id)}
	}
	dec, err := s.Decide(runner.Review{Goal: r.Goal, Approve: approve, By: r.by(d), Reason: r.Reason})
	if err != nil {
		return &usageError{fmt.Errorf("run %q: %w", id, err)}
	}
	if err := s.Commit(d.ctx); err != nil {
		return err
	}
	return r.report(cl, d, id, dec, checkoutOf(k, cfg))
}

func (r *reviewDecision) by(d *deps) string {
	user, _ := d.env.lookup("USER")
	return cmp.Or(r.By, user, "local user")
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

// report says what was recorded, and whether the workspace has moved on
// from the snapshot the decision binds to.
func (r *reviewDecision) report(cl *cli, d *deps, id string, dec gate.Decision, k workspace.Checkout) error {
	verdict := "rejected"
	if dec.Approved {
		verdict = "approved"
	}
	if _, err := fmt.Fprintf(d.stdout, "goal %s %s by %s for snapshot %s; run loop-action resume --run-id %s\n",
		dec.Goal, verdict, dec.By, phrase.Short(dec.Snapshot), id); err != nil {
		return err
	}
	if now, err := workspace.NewHasherWith(cl.root(d), k).Snapshot(d.ctx); err == nil && string(now) != dec.Snapshot {
		fmt.Fprintf(d.stderr, "note: the workspace has changed since snapshot %s was measured; resume will re-open the review for the new one\n", phrase.Short(dec.Snapshot))
	}
	return nil
}
