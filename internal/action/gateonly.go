package action

import (
	"context"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
)

// forkNotice is what a fork's pull request is told.
const forkNotice = "This pull request comes from a fork: it runs with a read-only token and no secrets, " +
	"so loop-action evaluated the gate on its code only. No agent ran and no state was saved."

// gateOnly evaluates the gate on a fork's code: no agent, no state, no
// comment (the token is read-only). The outcome is runner.GateOnly, whose
// success says whether the gate holds; the job summary and the outputs
// (stop-reason gate-only, no run id) say so.
//
// The checks run the fork's code: like the runner's, they never see the
// job's file commands, which are put back before anything is reported.
func (j *job) gateOnly(ctx context.Context, cfg *loop.Config) error {
	_, verdicts, err := runner.Measure(ctx, cfg, j.workspace, j.env.Environ, j.checkout)
	if err != nil {
		return err
	}
	out := runner.GateOnlyOutcome(cfg, verdicts)
	s := &session{cfg: cfg}
	r := Report{Loop: cfg.Name, Status: out.Status, Success: out.Success, Verdicts: verdicts, Notice: forkNotice, SummaryURL: j.pub().runURL()}
	j.a.Noticef("%s", forkNotice)
	j.pub().summary(r)
	j.pub().annotate(s, verdicts)
	dv := delivery{success: out.Success} // a fork's PR: the gate holds on its code; nothing is delivered
	j.pub().outputs(s, out, r, dv)
	return j.in.unsuccessful(out, dv)
}
