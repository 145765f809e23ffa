package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/runner"
)

type gateCmd struct {
	JSON bool `help:"Print the verdicts as JSON."`
}

func (gateCmd) Help() string {
	return `Runs every command check and the metrics command in the loop root, looks at
the files checks name, and rules on each goal with the evidence it measured.
Judge checks fail here: judges only run inside a loop iteration. Manual checks
stay pending until a review decision exists for the current workspace.
Exits 0 iff the loop's overall success holds, 1 otherwise, 2 on a config error.

Example:
  loop-action -C examples/quickstart gate
  loop-action gate --json | jq '.goals[] | select(.satisfied | not)'`
}

// gateView is what gate prints.
type gateView struct {
	Success        bool           `json:"success"`
	AwaitingReview bool           `json:"awaiting_review"`
	Snapshot       string         `json:"snapshot"`
	Goals          []gate.Verdict `json:"goals"`
}

func (g *gateCmd) Run(c *cli, d *deps) error {
	cfg, err := c.load(d)
	if err != nil {
		return err
	}
	k, err := c.checkout(d)
	if err != nil {
		return err
	}
	ev, verdicts, err := runner.Measure(d.ctx, cfg, c.root(d), d.env.vars, k)
	if err != nil {
		return err
	}
	v := gateView{
		Success:        gate.OverallSuccess(cfg, verdicts),
		AwaitingReview: gate.AwaitingReview(cfg, verdicts),
		Snapshot:       ev.Snapshot,
		Goals:          verdicts,
	}
	if g.JSON {
		err = writeJSON(d, v)
	} else {
		fmt.Fprint(d.stderr, cfg.Warnings.String())
		err = v.write(d.stdout)
	}
	if err != nil {
		return err
	}
	if !v.Success {
		return exitCodeError(exitUnsuccessful)
	}
	return nil
}

func (v gateView) write(w io.Writer) error {
	p := &printer{w: w}
	for _, verdict := range v.Goals {
		kind := ""
		if !verdict.Blocking {
			kind = ", advisory"
		}
		p.f("%-7s %s (%d/%d checks%s)\n", label(verdict.Status()), verdict.Goal, verdict.Passed, verdict.Total, kind)
		for _, ch := range verdict.Checks {
			p.f("  %-7s %-11s %s\n", label(ch.Status), ch.Type, ch.Evidence)
		}
	}
	satisfied, blocking := gate.Blocking(v.Goals)
	switch {
	case v.Success:
		p.f("\noverall: success (%d of %d blocking goals satisfied)\n", satisfied, blocking)
	case v.AwaitingReview:
		p.f("\noverall: awaiting review (%d of %d blocking goals satisfied)\n", satisfied, blocking)
	default:
		p.f("\noverall: not successful (%d of %d blocking goals satisfied)\n", satisfied, blocking)
	}
	return p.err
}

// label is a status as the tables show it: PASS, PENDING, or else FAIL.
func label(s gate.Status) string {
	if s != gate.Pass && s != gate.Pending {
		s = gate.Fail
	}
	return strings.ToUpper(string(s))
}
