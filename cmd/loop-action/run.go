package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

type runCmd struct {
	storeFlags    `embed:""`
	RunID         string `name:"run-id" placeholder:"ID" help:"Run id (default: <loop>/<git branch>, or <loop>/local)."`
	MaxIterations int    `name:"max-iterations" placeholder:"N" help:"Iteration cap for this run, instead of stop.max_iterations; raising it continues a run stopped by the cap."`
	JSON          bool   `help:"Print the outcome as JSON on stdout."`
}

func (runCmd) Help() string {
	return `Runs the loop, or resumes it when the run id has a checkpoint that is not over.
Every iteration is checkpointed to --state. A run that is over is reported
without running anything, except that one stopped by a budget continues when
that budget was raised (--max-iterations, or a larger budget in the config).
Progress goes to stderr; the outcome to stdout. Exit codes: 0 success,
1 stopped without success, 2 usage or config error, 3 internal error,
4 paused awaiting review.

Example:
  loop-action -C examples/quickstart run
  loop-action run --run-id green-build/fix-123 --max-iterations 12 --json`
}

func (c *runCmd) Run(cl *cli, d *deps) error {
	return cl.runLoop(d, &c.storeFlags, c.RunID, c.MaxIterations, c.JSON, false)
}

type resumeCmd struct {
	runFlags      `embed:""`
	MaxIterations int  `name:"max-iterations" placeholder:"N" help:"Raise (or set) the iteration cap."`
	JSON          bool `help:"Print the outcome as JSON on stdout."`
}

func (resumeCmd) Help() string {
	return `Continues a run from its checkpoint: after an interruption, after a review
decision, or with a raised budget. Without --run-id, the run updated last.

Example:
  loop-action review approve ui-approved && loop-action resume`
}

func (c *resumeCmd) Run(cl *cli, d *deps) error {
	return cl.runLoop(d, &c.storeFlags, c.RunID, c.MaxIterations, c.JSON, true)
}

// runLoop is run and resume: load, check the environment, open a session
// on the run (which locks and loads it), drive it and report.
func (cl *cli) runLoop(d *deps, sf *storeFlags, id string, maxIter int, asJSON, resume bool) error {
	cfg, err := cl.load(d)
	if err != nil {
		return err
	}
	if ds := cfg.CheckEnv(d.env.lookup, loop.Error); ds.HasErrors() {
		return &loop.ConfigError{Diagnostics: ds}
	}
	k, err := cl.checkout(d)
	if err != nil {
		return err
	}
	store, err := sf.store(cl, d, checkoutOf(k, cfg))
	if err != nil {
		return err
	}
	defer store.Close()
	root := cl.root(d)
	branch, commit := gitHead(root)
	if id == "" && !resume {
		id = deriveRunID(cfg.Name, branch)
	}
	if id, err = namedRun(d, store, id); err != nil {
		return err
	}
	s, err := openSession(d, runner.Options{
		Config: cfg, Root: root, RunID: id, Store: store, Env: d.env.vars, Commit: commit, Checkout: k,
		Progress: newProgress(d.stderr, d.color(), d.now), Version: buildVersion(),
		MaxIterations: maxIter, Log: d.stderr,
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if resume && s.Checkpoint() == nil {
		return &usageError{fmt.Errorf("no run %q to resume", id)}
	}
	out, err := s.Run(d.ctx)
	if err != nil {
		return err
	}
	return finish(d, out.Status, asJSON, out, func() error { return writeOutcome(d.stdout, out) })
}

// finish prints how a run stands, v as JSON or else text, and returns the
// exit code of its status s.
func finish(d *deps, s state.Status, asJSON bool, v any, text func() error) error {
	show := text
	if asJSON {
		show = func() error { return writeJSON(d, v) }
	}
	if err := show(); err != nil {
		return err
	}
	return exitCodeError(statusCode(s))
}

// statusCode maps a run's status to the exit code.
func statusCode(s state.Status) int {
	switch s {
	case state.Success:
		return exitSuccess
	case state.AwaitingReview:
		return exitAwaitingReview
	}
	return exitUnsuccessful
}

// writeOutcome prints how the run stands, with the goal table.
func writeOutcome(w io.Writer, out runner.Outcome) error {
	p := &printer{w: w}
	note := ""
	if !out.Ran {
		note = " (already over; nothing ran)"
	}
	p.f("run %s: %s after %d of %d iterations%s\n", out.RunID, out.Status, out.Iteration, out.MaxIterations, note)
	if out.Detail != "" {
		p.f("  %s\n", out.Detail)
	}
	p.f("  spend: %s\n\n", spendLine(out.Spend))
	writeGoals(p, out)
	if out.ExportPath != "" {
		p.f("\nsuccess export: %s\n", out.ExportPath)
	}
	return p.err
}

// writeGoals prints a run's goal table, then the exact commands for each
// review it waits for.
func writeGoals(p *printer, out runner.Outcome) {
	if p.err == nil {
		p.err = gateView{Success: out.Success, AwaitingReview: out.Status == state.AwaitingReview, Goals: out.Verdicts}.write(p.w)
	}
	for _, v := range out.Verdicts {
		if i := slices.IndexFunc(v.Checks, func(c gate.CheckVerdict) bool { return c.ReviewRequested }); i >= 0 {
			p.f("\nreview wanted: %s\n  approve: loop-action review approve %s --run-id %s\n  reject:  loop-action review reject %s --run-id %s --reason \"...\"\n",
				v.Checks[i].Evidence, v.Goal, out.RunID, v.Goal, out.RunID)
		}
	}
}

// color reports whether stderr is a terminal that may be coloured.
func (d *deps) color() bool {
	if _, set := d.env.lookup("NO_COLOR"); set {
		return false
	}
	return isTerminal(d.stderr)
}

// spendLine renders what a run used.
func spendLine(sp state.Spend) string {
	est := ""
	if sp.Estimated {
		est = " (some estimated)"
	}
	return fmt.Sprintf("%d tokens%s, $%.4f, %s wall clock", sp.Tokens, est, sp.CostUSD, sp.WallClock.Round(time.Second))
}
