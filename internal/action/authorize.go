package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/phrase"
)

// The authorize mode decides, before any code of a pull request runs,
// whether the job that checks it out may follow: a workflow's first job
// runs loop-action with mode authorize and no checkout, and the loop job
// needs its proceed output and checks out its head-sha. A comment's job
// holds the agents' secrets and a write token, so the fork test and the
// commenter's permission are loop-action's, from the event and the API —
// never from a checkout, which the setup steps (npm install, a build
// backend) would have run already. The run mode checks everything again.
//
// It reads the event and the API only: never the workspace, never the
// state branch. It decides with the run mode's rules (ignoredComment,
// ParseCommand, mayCommand, the fork test) and exits 0 whatever it
// decides; only a broken setup (no token, no event) or an API it cannot
// read fails it.

// authorization is what the authorize mode decided.
type authorization struct {
	proceed bool
	head    string // the commit the loop job checks out; "" when it does not proceed
	summary string // one line: what was decided and why
}

// authorizeJob decides for the job's event and writes the outputs proceed,
// head-sha and summary, with a notice in the job log.
func (j *job) authorizeJob(ctx context.Context) error {
	az, err := j.authorizeEvent(ctx)
	if err != nil {
		az = authorization{summary: "not authorized: " + j.mask(err.Error())}
	}
	if !az.proceed {
		az.head = ""
	}
	j.pub().output("proceed", fmt.Sprint(az.proceed))
	j.pub().output("head-sha", az.head)
	j.pub().output("summary", az.summary)
	if err == nil {
		j.a.Noticef("%s", az.summary)
	}
	return err
}

// authorizeEvent dispatches on the event, as handle does.
func (j *job) authorizeEvent(ctx context.Context) (authorization, error) {
	switch ev := j.ctx.EventName; ev {
	case "pull_request":
		return j.authorizePull()
	case "issue_comment":
		return j.authorizeComment(ctx)
	case "schedule", "workflow_dispatch":
		if j.ctx.SHA == "" {
			return authorization{}, badSetup(errors.New("GITHUB_SHA is unset: the loop job checks out the commit the workflow runs on"))
		}
		return authorization{proceed: true, head: j.ctx.SHA,
			summary: fmt.Sprintf("authorized: %s on %s (GITHUB_SHA)", ev, phrase.Short(j.ctx.SHA))}, nil
	}
	return authorization{summary: fmt.Sprintf("not authorized: event %q is not one loop-action handles (pull_request, issue_comment, schedule, workflow_dispatch)", j.ctx.EventName)}, nil
}

// authorizePull lets a pull request's own event proceed on its head: a
// fork's too, since GitHub gives that job a read-only token and no
// secrets (the run mode then evaluates the gate only).
func (j *job) authorizePull() (authorization, error) {
	ev := j.ctx.Event
	n, head := number(ev, "number"), field(ev, "pull_request", "head", "sha")
	switch act := field(ev, "action"); act {
	case "opened", "synchronize", "reopened":
	default:
		return authorization{summary: fmt.Sprintf("not authorized: pull request #%d was %s; the loop runs when one is opened, reopened or pushed to", n, act)}, nil
	}
	if n == 0 || head == "" {
		return authorization{}, badSetup(errNoPullHead)
	}
	if forkEvent(ev) {
		return authorization{proceed: true, head: head, summary: fmt.Sprintf(
			"authorized: pull request #%d at %s comes from a fork (%s): its job has a read-only token and no secrets, and loop-action only evaluates the gate on it",
			n, phrase.Short(head), cmp.Or(field(ev, "pull_request", "head", "repo", "full_name"), "deleted"))}, nil
	}
	return authorization{proceed: true, head: head, summary: fmt.Sprintf("authorized: pull request #%d at %s (%s)", n, phrase.Short(head), field(ev, "action"))}, nil
}

// authorizeComment lets a /loop command proceed on the head the API gives
// for its pull request, when the pull request is not a fork's and the
// commenter may give that command. A refusal gets the reactions (and, for
// a fork's pull request, the reply) the run mode gives; a command that
// proceeds is acknowledged once, by the run mode.
func (j *job) authorizeComment(ctx context.Context) (authorization, error) {
	ev := j.ctx.Event
	if why := j.pub().ignoredComment(ev); why != "" {
		return authorization{summary: "not authorized: " + why}, nil
	}
	if j.client == nil {
		return authorization{}, badSetup(errNoCommandToken)
	}
	c := eventComment(ev)
	pr, err := j.client.PullRequest(ctx, j.owner, j.repo, number(ev, "issue", "number"))
	if err != nil {
		return authorization{}, err
	}
	if pr.Fork {
		if err := j.pub().refuseFork(ctx, pr, c.ID, c.Author); err != nil {
			j.a.Warningf("reply to comment %d: %s", c.ID, j.mask(err.Error()))
		}
		return authorization{summary: fmt.Sprintf("refused: comment %d by @%s: %s", c.ID, c.Author, forkRefusal(pr))}, nil
	}
	// Without the config there are no goal names: approve and reject of a
	// goal are known by their verb; any other malformed command ("") needs
	// write permission, and the run mode answers a writer with how to
	// write it.
	cmd, err := ParseCommand(c.Body, nil)
	verb := cmd.Verb
	if err != nil {
		verb = commandVerb(c.Body)
	}
	s := &session{pr: pr.Number}
	refusal := j.pub().mayCommand(ctx, c.Author, verb)
	if refusal == nil && c.Edited() {
		refusal = errEdited
	}
	if refusal != nil {
		_ = j.client.React(ctx, j.owner, j.repo, c.ID, "eyes")
		j.pub().refuseComment(ctx, s, c, refusal)
		return authorization{summary: fmt.Sprintf("refused: comment %d by @%s: %s", c.ID, c.Author, j.mask(refusal.Error()))}, nil
	}
	what := "/loop " + string(verb)
	if verb == "" {
		what = "a malformed /loop command"
	}
	return authorization{proceed: true, head: pr.HeadSHA,
		summary: fmt.Sprintf("authorized: %s by @%s on pull request #%d at %s", what, c.Author, pr.Number, phrase.Short(pr.HeadSHA))}, nil
}

// forkRefusal says why a command on a fork's pull request never runs.
func forkRefusal(pr github.PR) string {
	return fmt.Sprintf("pull request #%d comes from a fork (%s): /loop commands never run its code with this repository's token and secrets",
		pr.Number, cmp.Or(pr.HeadRepo, "deleted"))
}
