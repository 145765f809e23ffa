package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
)

// field reads a string (or a number, as text) from the event payload.
func field(ev map[string]any, path ...string) string {
	var v any = ev
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprintf("%.0f", x)
	case bool:
		return fmt.Sprint(x)
	}
	return ""
}

func number(ev map[string]any, path ...string) int {
	var n int
	_, _ = fmt.Sscan(field(ev, path...), &n)
	return n
}

// pullRequest handles pull_request: the loop runs or resumes on the head
// with the base's config; a fork gets a gate-only evaluation.
func (j *job) pullRequest(ctx context.Context) error {
	ev := j.ctx.Event
	if field(ev, "action") == "closed" {
		j.pub().skip(fmt.Sprintf("ignored: pull request #%d is closed: nothing to do", number(ev, "number")))
		return nil
	}
	n := number(ev, "number")
	head := field(ev, "pull_request", "head", "sha")
	if n == 0 || head == "" {
		return badSetup(errNoPullHead)
	}
	base, err := j.baseSHA(ctx, n)
	if err != nil {
		return badSetup(err)
	}
	cfg, err := j.configAt(ctx, base)
	if err != nil {
		return badSetup(err)
	}
	if forkEvent(ev) {
		return j.gateOnly(ctx, cfg)
	}
	if j.client == nil {
		return badSetup(errors.New("input github-token is empty: the action needs it to comment, set statuses and push the state branch"))
	}
	s, err := j.openPR(ctx, cfg, n, head, field(ev, "pull_request", "head", "ref"))
	if err != nil {
		return err
	}
	defer s.close()
	pr := github.PR{Number: n, HeadSHA: head}
	if _, err := j.catchUp(ctx, s, pr); err != nil {
		return err
	}
	return j.runAndReport(ctx, s)
}

// errNoPullHead is a pull_request event that names no pull request or head.
var errNoPullHead = errors.New("the pull_request event has no number or head sha")

// forkEvent reports whether a pull_request event's head lives in another
// repository than its base (or in one since deleted): such a job has a
// read-only token and no secrets, and its code is never trusted.
func forkEvent(ev map[string]any) bool {
	headRepo := field(ev, "pull_request", "head", "repo", "full_name")
	return headRepo == "" || !strings.EqualFold(headRepo, field(ev, "pull_request", "base", "repo", "full_name"))
}

// openPR checks that the checkout is the head of pull request n, on
// branch, and opens the session on its run.
func (j *job) openPR(ctx context.Context, cfg *loop.Config, n int, head, branch string) (*session, error) {
	if err := j.checkHead(ctx, head, "the pull request's head", checkoutFix); err != nil {
		return nil, err
	}
	s, err := j.open(ctx, cfg, j.runID(cfg, fmt.Sprintf("pr-%d", n)), n, head)
	if err != nil {
		return nil, err
	}
	s.branch = branch
	return s, nil
}

// baseSHA is the pull request's base commit, where its loop config is
// read: from the event, else from the API. There is no fallback on the
// head's config (unless allow-head-config, which needs no base).
func (j *job) baseSHA(ctx context.Context, n int) (string, error) {
	if sha := field(j.ctx.Event, "pull_request", "base", "sha"); sha != "" || j.in.AllowHeadConfig {
		return sha, nil
	}
	if j.client == nil {
		return "", errors.New("the pull_request event has no base sha, and without input github-token the pull request cannot be read from the API: the loop config is only read from the base commit")
	}
	pr, err := j.client.PullRequest(ctx, j.owner, j.repo, n)
	if err != nil {
		return "", fmt.Errorf("the pull_request event has no base sha, and the pull request could not be read to find it: %w", err)
	}
	if pr.BaseSHA == "" {
		return "", fmt.Errorf("the pull_request event has no base sha, and neither has pull request #%d from the API", n)
	}
	return pr.BaseSHA, nil
}

// issueComment handles a new comment on a pull request: /loop commands,
// including any a concurrency group dropped since the last one handled.
func (j *job) issueComment(ctx context.Context) error {
	ev := j.ctx.Event
	if why := j.pub().ignoredComment(ev); why != "" {
		j.pub().skip("ignored: " + why)
		return nil
	}
	if j.client == nil {
		return badSetup(errNoCommandToken)
	}
	pr, err := j.client.PullRequest(ctx, j.owner, j.repo, number(ev, "issue", "number"))
	if err != nil {
		return err
	}
	if c := eventComment(ev); pr.Fork {
		err := j.pub().refuseFork(ctx, pr, c.ID, c.Author)
		j.pub().skip(fmt.Sprintf("refused: comment %d by @%s: %s", c.ID, c.Author, forkRefusal(pr)))
		return err
	}
	cfg, err := j.configAt(ctx, pr.BaseSHA)
	if err != nil {
		return badSetup(err)
	}
	s, err := j.openPR(ctx, cfg, pr.Number, pr.HeadSHA, pr.HeadRef)
	if err != nil {
		return err
	}
	defer s.close()
	st, err := j.catchUp(ctx, s, pr)
	switch {
	case err != nil:
		return err
	case st.push:
		return j.pushCommand(ctx, s)
	case st.run:
		return j.runAndReport(ctx, s)
	case st.status:
		return j.reportCheckpoint(ctx, s)
	}
	j.pub().skipRun(s, fmt.Sprintf("loop %s: nothing to run: %s", s.cfg.Name, cmp.Or(strings.Join(s.handled, "; "), "no /loop command newer than the last one handled")))
	return nil
}

// errNoCommandToken is a comment's job without a token.
var errNoCommandToken = errors.New("input github-token is empty: the action needs it to answer /loop commands")

// eventComment is the comment of an issue_comment event, as the payload
// has it.
func eventComment(ev map[string]any) github.Comment {
	created, _ := time.Parse(time.RFC3339, field(ev, "comment", "created_at"))
	updated, _ := time.Parse(time.RFC3339, field(ev, "comment", "updated_at"))
	return github.Comment{
		ID: int64(number(ev, "comment", "id")), Body: field(ev, "comment", "body"),
		Author: field(ev, "comment", "user", "login"), AuthorType: field(ev, "comment", "user", "type"),
		CreatedAt: created, UpdatedAt: updated,
	}
}

// ignoredComment says why an issue_comment event is none of the loop's
// business, or "": only a new comment on a pull request, by no bot (and
// not under the bot's login), holding a /loop command, is. It asks GitHub
// nothing.
func (p *publisher) ignoredComment(ev map[string]any) string {
	c := eventComment(ev)
	switch act := field(ev, "action"); {
	case act != "created":
		return fmt.Sprintf("comment %d was %s, not created: only a new comment is a command (an edit would run one again with today's secrets)", c.ID, cmp.Or(act, "(no action)"))
	case field(ev, "issue", "pull_request", "url") == "":
		return fmt.Sprintf("comment %d is on issue #%d, not on a pull request", c.ID, number(ev, "issue", "number"))
	case p.fromBot(c):
		return fmt.Sprintf("comment %d is by @%s, a bot or the bot's own login", c.ID, c.Author)
	}
	if _, err := ParseCommand(c.Body, nil); errors.Is(err, ErrNotCommand) {
		return fmt.Sprintf("comment %d holds no /loop command", c.ID)
	}
	return ""
}

// skip ends a job that ignores or refuses its event, or carries out
// nothing of it: a notice says why in the job log, and the outputs say
// so (success false, summary the line).
func (p *publisher) skip(summary string) {
	summary = phrase.OneLine(p.mask(summary))
	p.a.Noticef("%s", summary)
	p.output("success", "false")
	p.output("summary", summary)
}

// skipRun is skip for a job that opened run s: run-id names it.
func (p *publisher) skipRun(s *session, summary string) {
	p.skip(summary)
	p.output("run-id", s.runID)
}

// refuseFork answers a command on a fork's pull request: such code never
// runs with this job's token and secrets. Only people with write
// permission get a reply (see mayReply); others a reaction.
func (p *publisher) refuseFork(ctx context.Context, pr github.PR, id int64, author string) error {
	_ = p.api.React(ctx, p.owner, p.repo, id, "-1")
	if perm, err := p.api.Permission(ctx, p.owner, p.repo, author); err != nil || !writes(perm) {
		return nil
	}
	_, err := p.api.Comment(ctx, p.owner, p.repo, pr.Number, fmt.Sprintf(
		"@%s: this pull request comes from a fork, so loop-action only evaluates the gate on it (a fork's code never runs with this repository's token and secrets); /loop commands are not available here.", author))
	return err
}

// branch handles schedule and workflow_dispatch: the loop runs or resumes
// on the branch, with the config in the workspace.
func (j *job) branch(ctx context.Context) error {
	cfg, err := j.workspaceConfig()
	if err != nil {
		return badSetup(err)
	}
	ref := cmp.Or(j.ctx.RefName, "main")
	if err := j.checkHead(ctx, j.ctx.SHA, "the commit the workflow runs on (GITHUB_SHA)", branchCheckoutFix); err != nil {
		return err
	}
	s, err := j.open(ctx, cfg, j.runID(cfg, ref), 0, j.ctx.SHA)
	if err != nil {
		return err
	}
	defer s.close()
	s.branch = ref
	return j.runAndReport(ctx, s)
}

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
