package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// steer is what the comments handled ask of this job.
type steer struct {
	run    bool // approve, reject or run: drive the loop now
	status bool // status or stop: refresh the report
	push   bool // push: deliver the certified workspace now
}

// catchup is one pass over a pull request's new comments.
type catchup struct {
	j    *job
	s    *session
	pr   github.PR
	cp   *state.Checkpoint // the session's; nil before the loop first ran
	reqs []reviewRequest   // the review requests on the pull request
	st   steer
}

// catchUp handles every /loop command in the pull request's comments newer
// than the last one handled, oldest first, so that commands a concurrency
// group dropped are not lost; then it commits the run's changes. It works
// on the session's checkpoint, under the run's lock.
func (j *job) catchUp(ctx context.Context, s *session, pr github.PR) (steer, error) {
	all, err := j.client.Comments(ctx, j.owner, j.repo, pr.Number)
	if err != nil {
		return steer{}, err
	}
	cu := &catchup{j: j, s: s, pr: pr, cp: s.run.Checkpoint(), reqs: j.pub().reviewRequests(all, s.cfg.Name)}
	for _, c := range all {
		if cu.cp != nil && c.ID <= cu.cp.LastCommentID {
			continue
		}
		cu.handleComment(ctx, c)
		s.run.HandledComment(c.ID)
	}
	return cu.st, s.run.Commit(ctx)
}

// errEdited refuses an edited comment: what it says now is not what was
// written when it was posted, and may not even be its author's words.
var errEdited = errors.New("an edited comment is never a command: write the command in a new comment")

// handleComment acknowledges a comment's command, checks its author, and
// applies it; anything refused gets 👎, and a reply saying why when its
// author may make the bot speak (see mayReply).
func (cu *catchup) handleComment(ctx context.Context, c github.Comment) {
	if cu.j.pub().fromBot(c) {
		return
	}
	cmd, err := ParseCommand(c.Body, goalNames(cu.s))
	if errors.Is(err, ErrNotCommand) {
		return
	}
	_ = cu.j.client.React(ctx, cu.j.owner, cu.j.repo, c.ID, "eyes")
	if err == nil && c.Edited() {
		err = errEdited
	}
	if err == nil {
		err = cu.j.pub().authorize(ctx, cu.s, c.Author, cmd)
	}
	if err == nil {
		err = cu.apply(ctx, cmd, c)
	}
	if err != nil {
		line := phrase.OneLine(fmt.Sprintf("comment %d by @%s refused: %s", c.ID, c.Author, cu.j.mask(err.Error())))
		cu.j.a.Noticef("%s", line)
		cu.s.handled = append(cu.s.handled, line)
		cu.j.pub().refuseComment(ctx, cu.s, c, err)
		return
	}
	cu.s.handled = append(cu.s.handled, fmt.Sprintf("comment %d by @%s: /loop %s done", c.ID, c.Author, cmd.Verb))
	_ = cu.j.client.React(ctx, cu.j.owner, cu.j.repo, c.ID, "+1")
}

// fromBot reports whether c is a bot's, or written under the bot's login:
// such comments are never heard.
func (p *publisher) fromBot(c github.Comment) bool {
	return c.AuthorType == "Bot" || strings.EqualFold(c.Author, p.in.Bot)
}

// refuseComment answers a command refused with why: 👎, and a reply
// saying why when its author may make the bot speak (see mayReply).
func (p *publisher) refuseComment(ctx context.Context, s *session, c github.Comment, why error) {
	_ = p.api.React(ctx, p.owner, p.repo, c.ID, "-1")
	if p.mayReply(ctx, c.Author) {
		p.reply(ctx, s, c, why.Error())
	}
}

// mayReply reports whether the bot answers author in words: only people
// with write permission make it speak. Anyone else gets reactions only, so
// that nobody can have the bot post on their behalf or multiply comments
// (each reply notifies and counts against the token's content limits).
func (p *publisher) mayReply(ctx context.Context, author string) bool {
	perm, err := p.permission(ctx, author)
	if err != nil {
		p.a.Warningf("%s", p.mask(err.Error()))
	}
	return err == nil && writes(perm)
}

func writes(perm string) bool { return perm == "admin" || perm == "write" }

func (p *publisher) reply(ctx context.Context, s *session, c github.Comment, text string) {
	if _, err := p.api.Comment(ctx, p.owner, p.repo, s.pr, fmt.Sprintf("@%s: %s", c.Author, text)); err != nil {
		p.a.Warningf("reply to comment %d: %s", c.ID, p.mask(err.Error()))
	}
}

// permission is author's permission on the repository, asked once a job.
func (p *publisher) permission(ctx context.Context, author string) (string, error) {
	key := strings.ToLower(author)
	if perm, ok := p.perms[key]; ok {
		return perm, nil
	}
	perm, err := p.api.Permission(ctx, p.owner, p.repo, author)
	if err != nil {
		return "", err
	}
	p.perms[key] = perm
	return perm, nil
}

func goalNames(s *session) []string {
	names := make([]string, len(s.cfg.Goals))
	for i, g := range s.cfg.Goals {
		names[i] = g.Name
	}
	return names
}

// authorize lets anyone ask for status, which only refreshes the loop's
// comment; the other commands need write, maintain or admin permission
// (mayCommand), and all but help a place among [review] approvers when the
// config lists any.
func (p *publisher) authorize(ctx context.Context, s *session, author string, cmd Command) error {
	if err := p.mayCommand(ctx, author, cmd.Verb); err != nil || cmd.Verb == Status {
		return err
	}
	if cmd.Verb != Help && !approver(s, author) {
		return fmt.Errorf("/loop %s is limited to the approvers the loop config lists ([review] approvers)", cmd.Verb)
	}
	return nil
}

// mayCommand lets anyone ask for status; any other command (verb "" is a
// malformed one) needs write, maintain or admin permission now. A
// permission that cannot be checked refuses it.
func (p *publisher) mayCommand(ctx context.Context, author string, verb Verb) error {
	if verb == Status {
		return nil
	}
	what := "/loop " + string(verb)
	if verb == "" {
		what = "a /loop command"
	}
	perm, err := p.permission(ctx, author)
	if err != nil {
		return fmt.Errorf("your permission could not be checked (%s), so %s was not carried out", p.mask(err.Error()), what)
	}
	if !writes(perm) {
		return fmt.Errorf("%s needs write permission on %s/%s; you have %s", what, p.owner, p.repo, perm)
	}
	return nil
}

// approver reports whether the config's [review] approvers, if it lists
// any, include login.
func approver(s *session, login string) bool {
	list := s.cfg.Review.Approvers
	return len(list) == 0 || slices.ContainsFunc(list, func(a string) bool { return strings.EqualFold(a, login) })
}

// apply carries out an authorized command.
func (cu *catchup) apply(ctx context.Context, cmd Command, c github.Comment) error {
	switch cmd.Verb {
	case Help:
		cu.j.pub().reply(ctx, cu.s, c, helpText)
		return nil
	case Status:
		cu.st.status = true
		return nil
	}
	cp, pr := cu.cp, cu.pr
	if cp == nil {
		if cmd.Verb == RunLoop {
			return errors.New("the loop has not run on this pull request yet; it starts with the next push, or re-run the pull_request workflow")
		}
		return errors.New("the loop has not run on this pull request yet")
	}
	if cp.Commit != pr.HeadSHA {
		return fmt.Errorf("the pull request's head moved to %s since the loop last ran on %s; the loop runs on the new head with the next pull_request event, and asks again", phrase.Short(pr.HeadSHA), phrase.Short(cp.Commit))
	}
	switch cmd.Verb {
	case Approve, Reject:
		return cu.decide(ctx, cmd, c)
	case Stop:
		if err := cu.s.run.Stop(fmt.Sprintf("stopped by @%s with /loop stop", c.Author)); err != nil {
			return err
		}
		cu.st.status = true
	case RunLoop:
		cu.st.run = true
	case PushFix:
		if err := mayPush(cu.j.in.Deliver, cp); err != nil {
			return err
		}
		cu.st.push = true
	}
	return nil
}

// decide records an approval or a rejection of a pending review under the
// runner's review rule (bound to the snapshot under review), when the
// comment answers the request for that snapshot; the loop then resumes in
// this job.
func (cu *catchup) decide(ctx context.Context, cmd Command, c github.Comment) error {
	goal, err := runner.PendingReview(cu.cp.Verdicts, cmd.Goal)
	if err != nil {
		return reviewRefusal(err)
	}
	if err := cu.answers(ctx, goal, cmd.Verb, c); err != nil {
		return err
	}
	r := runner.Review{Goal: goal, Approve: cmd.Verb == Approve, By: c.Author, Reason: cmd.Reason, Comment: c.ID}
	if _, err := cu.s.run.Decide(r); err != nil {
		return reviewRefusal(err)
	}
	cu.st.run = true
	return nil
}

// reviewRefusal words the review rule's refusal for a reply, with the
// goals as inline code and the command to use.
func reviewRefusal(err error) error {
	var re *runner.ReviewError
	switch {
	case !errors.As(err, &re):
		return err
	case re.Goal != "":
		return fmt.Errorf("no review of goal %s is pending", Verbatim(re.Goal))
	case len(re.Pending) == 0:
		return errors.New("no review is pending")
	}
	return fmt.Errorf("reviews of %s are pending: name the goal, e.g. /loop approve %s", verbatimAll(re.Pending), re.Pending[0])
}

// answers checks that comment c answers the request to review goal on the
// snapshot under review: the latest request for goal before c names it.
// When the bot never asked (the request could not be posted, or the loop
// paused under an older version), it asks now and c does not count.
func (cu *catchup) answers(ctx context.Context, goal string, verb Verb, c github.Comment) error {
	snap := cu.cp.Snapshot
	if got, ok := answered(cu.reqs, goal, c.ID); ok && got == snap {
		return nil
	}
	noun := map[Verb]string{Approve: "approval", Reject: "rejection"}[verb]
	if requestedEver(cu.reqs, goal, snap) {
		return fmt.Errorf("your %s predates the review request for snapshot %s of goal %s; look at that snapshot, then %s again",
			noun, Verbatim(phrase.Short(snap)), Verbatim(goal), verb)
	}
	r, err := cu.j.pub().postReviewRequest(ctx, cu.s, goal, snap, reviewQuestion(cu.cp.Verdicts, goal))
	if err != nil {
		return fmt.Errorf("no review of snapshot %s was requested yet, and the request failed (%s); try again later", Verbatim(phrase.Short(snap)), cu.j.mask(err.Error()))
	}
	cu.reqs = append(cu.reqs, r)
	return fmt.Errorf("no review of snapshot %s of goal %s had been requested; the request is posted now: look at it, then %s again",
		Verbatim(phrase.Short(snap)), Verbatim(goal), verb)
}

// reviewQuestion is the evidence line of goal's check awaiting review.
func reviewQuestion(verdicts []gate.Verdict, goal string) string {
	for _, v := range verdicts {
		for _, c := range v.Checks {
			if v.Goal == goal && c.ReviewRequested {
				return c.Evidence
			}
		}
	}
	return "review goal " + goal
}

const helpText = "loop-action commands, one per comment:\n\n" +
	"- `/loop approve [goal]` approves the review the loop is waiting for (the goal can be left out when only one waits)\n" +
	"- `/loop reject [goal] <reason>` rejects it; the builders get the reason and try again\n" +
	"- `/loop run` runs the loop again (after a budget was raised, say)\n" +
	"- `/loop stop` stops the run; `/loop run` resumes it\n" +
	"- `/loop push` pushes the certified fix onto this branch when the loop only posts it (`deliver: comment` or `none`)\n" +
	"- `/loop status` refreshes the loop's comment\n" +
	"- `/loop help` shows this\n\n" +
	"All but status need write permission on the repository; approve, reject, run, stop and push are limited to `[review] approvers` when the loop config lists any. " +
	"An approval or rejection counts for the snapshot whose review request it answers, and an edited comment is never a command."
