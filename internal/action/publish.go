package action

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/loop-action/loop-action/internal/action/artifact"
	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// commentLimit leaves room under GitHub's 65,536 characters.
const commentLimit = CommentLimit - 1024

// report publishes a run's outcome and what became of its work (the
// statuses are conclude's): the artifact, the job summary, the sticky
// comment and review requests, annotations and outputs. When nothing ran
// (the run was already over) it changes nothing on the pull request unless
// asked to refresh the comment (/loop status) or something was delivered.
func (p *publisher) report(ctx context.Context, s *session, out runner.Outcome, dv delivery, evs []ledger.Event, refresh bool) error {
	r := p.newReport(ctx, s, out)
	r.Delivery, r.Diff, r.Apply = dv.notes, dv.diff, dv.apply
	if out.Ran && out.Success && p.in.UploadExport && out.ExportPath != "" {
		r.ArtifactURL = p.upload(ctx, out.ExportPath)
	}
	p.summary(r)
	if s.pr > 0 && p.in.Comment && (out.Ran || refresh || out.Status == runner.GateOnly) {
		if _, err := p.api.UpsertSticky(ctx, p.owner, p.repo, s.pr, Marker(s.cfg.Name), r.Markdown(commentLimit), p.in.Bot); err != nil {
			return err
		}
	}
	if s.pr > 0 && out.Ran {
		p.requestReviews(ctx, s, evs)
	}
	p.annotate(s, out.Verdicts)
	p.outputs(s, out, r, dv)
	return nil
}

// reportCheckpoint reports a run from the session's checkpoint, amendments
// included (/loop status, stop), without running it.
func (j *job) reportCheckpoint(ctx context.Context, s *session) error {
	cp := s.run.Checkpoint()
	if cp == nil {
		j.pub().skipRun(s, fmt.Sprintf("loop %s: nothing to report: the loop has not run on this pull request yet", s.cfg.Name))
		return nil
	}
	return j.pub().report(ctx, s, runner.OutcomeOf(cp), recorded(cp), nil, true)
}

// recorded says, for a report from the checkpoint, where the run's work
// went as the checkpoint records it; it certifies nothing.
func recorded(cp *state.Checkpoint) delivery {
	d := cp.Delivery
	if d == nil {
		return delivery{}
	}
	var dv delivery
	switch d.Outcome {
	case outcomePushed:
		dv.say("This run's %s work was pushed to `%s` as %s.", d.Kind, d.Ref, phrase.Short(d.SHA))
	default:
		dv.say("This run's %s work (snapshot `%s`) was not pushed: %s.", d.Kind, phrase.Short(d.Snapshot), d.Outcome)
	}
	return dv
}

func (p *publisher) newReport(ctx context.Context, s *session, out runner.Outcome) Report {
	evs := ledgerOf(ctx, s)
	r := Report{
		Loop: s.cfg.Name, RunID: out.RunID, Status: out.Status, Success: out.Success, Detail: out.Detail,
		Iteration: out.Iteration, MaxIterations: out.MaxIterations, Spend: out.Spend, Verdicts: out.Verdicts,
		History: history(evs), SummaryURL: p.runURL(),
	}
	if out.Status != runner.GateOnly {
		r.ByProvider = spendByProvider(evs)
	}
	if out.ExportPath != "" { // relative to the workspace when it is under it
		r.ExportPath = out.ExportPath
		if rel, err := filepath.Rel(p.workspace, out.ExportPath); err == nil {
			r.ExportPath = filepath.ToSlash(rel)
		}
	}
	return r
}

func (p *publisher) runURL() string {
	if p.ctx.RunID == 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/%s/actions/runs/%d", strings.TrimSuffix(p.ctx.ServerURL, "/"), p.owner, p.repo, p.ctx.RunID)
}

// upload zips the export and uploads it as a workflow artifact; a failure
// is a warning, not the run's failure.
func (p *publisher) upload(ctx context.Context, dir string) string {
	cfg := artifact.Config{
		ResultsURL: p.getenv("ACTIONS_RESULTS_URL"), RuntimeToken: p.getenv("ACTIONS_RUNTIME_TOKEN"),
		ServerURL: p.ctx.ServerURL, Repository: p.owner + "/" + p.repo, RunID: fmt.Sprint(p.ctx.RunID),
	}
	if cfg.ResultsURL == "" || cfg.RuntimeToken == "" {
		p.a.Warningf("the success export was not uploaded: ACTIONS_RESULTS_URL or ACTIONS_RUNTIME_TOKEN is unset")
		return ""
	}
	res, err := artifact.Upload(ctx, cfg, filepath.Base(dir), dir)
	if err != nil {
		p.a.Warningf("upload the success export: %s", p.mask(err.Error()))
		return ""
	}
	p.a.Noticef("success export uploaded as artifact %s (%d bytes, sha256 %s)", res.Name, res.Size, res.SHA256)
	return res.URL
}

// summary writes the report to the job summary, when the runner gave one.
func (p *publisher) summary(r Report) {
	if p.getenv("GITHUB_STEP_SUMMARY") != "" {
		p.a.AddStepSummary(r.Markdown(SummaryLimit / 4)) // a character is at most 4 bytes
	}
}

// requestReviews posts one comment per review the run requested, so that
// people are notified; an approval or rejection counts only if written
// after the request for its snapshot (see reviewRequest).
func (p *publisher) requestReviews(ctx context.Context, s *session, evs []ledger.Event) {
	for _, e := range evs {
		if e.Type != ledger.ReviewRequested {
			continue
		}
		if _, err := p.postReviewRequest(ctx, s, e.Goal, e.Snapshot, e.Reason); err != nil {
			p.a.Warningf("%s", p.mask(err.Error()))
		}
	}
}

// status sets the commit status loop/<name> on a pull request's head; a
// branch's run sets none on the commit it started from.
func (p *publisher) status(ctx context.Context, s *session, st, desc string) {
	if s.pr > 0 {
		p.setStatus(ctx, s, s.head, st, desc)
	}
}

// setStatus sets the commit status loop/<name> on sha.
func (p *publisher) setStatus(ctx context.Context, s *session, sha, st, desc string) {
	if p.api == nil || sha == "" {
		return
	}
	if err := p.api.SetStatus(ctx, p.owner, p.repo, sha, st, "loop/"+s.cfg.Name, desc, p.runURL()); err != nil {
		p.a.Warningf("set status loop/%s: %s", s.cfg.Name, p.mask(err.Error()))
	}
}

func statusState(s state.Status) string {
	switch s {
	case state.Success:
		return "success"
	case state.AwaitingReview, state.Running:
		return "pending"
	}
	return "failure"
}

func statusText(out runner.Outcome) string {
	switch out.Status {
	case state.Success:
		return fmt.Sprintf("success after %d iterations", out.Iteration)
	case state.AwaitingReview:
		for _, v := range out.Verdicts {
			for _, c := range v.Checks {
				if c.ReviewRequested {
					return "awaiting review: comment /loop approve " + v.Goal
				}
			}
		}
		return "awaiting review"
	}
	return fmt.Sprintf("%s after %d iterations: %s", out.Status, out.Iteration, out.Detail)
}

// annotate marks the failing checks of blocking goals, at most 10 (the
// runner shows no more errors per step), each message cut to 4,000 bytes.
func (p *publisher) annotate(s *session, verdicts []gate.Verdict) {
	n := 0
	for _, v := range verdicts {
		for _, c := range v.Checks {
			if !v.Blocking || c.Status != gate.Fail || n == 10 {
				continue
			}
			n++
			msg := c.Evidence
			if len(msg) > 4000 {
				msg = msg[:4000]
			}
			p.a.WithFieldsMap(map[string]string{"title": fmt.Sprintf("loop/%s: goal %s (%s)", s.cfg.Name, v.Goal, c.Type)}).Errorf("%s", msg)
		}
	}
}

// publisher is the job's voice and ear on GitHub and in the runner's
// files: the commit statuses, the sticky comment, replies and review
// requests, the job summary, annotations, outputs and the artifact; and
// who is speaking (the bot or someone, with which permission) and what
// GitHub shows of the loop's own work.
type publisher struct {
	a           *githubactions.Action
	api         githubAPI // nil without a token
	owner, repo string
	ctx         *githubactions.GitHubContext
	in          *Inputs
	getenv      func(string) string
	workspace   string
	mask        func(string) string // hides the job's tokens
	perms       map[string]string   // permission by lower-case login, asked once a job
}

// pub is the job's publisher, made on first use.
func (j *job) pub() *publisher {
	if j.publisher == nil {
		j.publisher = &publisher{a: j.a, api: j.client, owner: j.owner, repo: j.repo, ctx: j.ctx, in: &j.in,
			getenv: j.env.Getenv, workspace: j.workspace, mask: j.mask, perms: map[string]string{}}
	}
	return j.publisher
}
