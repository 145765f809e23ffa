package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loop-action/loop-action/action/github"
	"github.com/loop-action/loop-action/gate"
	"github.com/loop-action/loop-action/runner"
	"github.com/loop-action/loop-action/state"
)

// steer is what the comments handled ask of this job.
type steer struct {
	run    bool // approve, reject or run: drive the loop now
	status bool // status or stop: refresh the report
}

// catchUp handles every /loop command in the pull request's comments newer
// than the last one handled, oldest first, so that commands a concurrency
// group dropped are not lost; then it commits the run's changes.
func (j *job) catchUp(ctx context.Context, s *session, pr github.PR) (steer, error) {
	cp, err := s.checkpoint(ctx)
	if err != nil {
		return steer{}, err
	}
	var last int64
	if cp != nil {
		last = cp.LastCommentID
	}
	comments, err := j.client.CommentsSince(ctx, j.owner, j.repo, pr.Number, last)
	if err != nil {
		return steer{}, err
	}
	var st steer
	var amend *runner.Amendment
	if cp != nil {
		amend = runner.Amend(cp, j.now)
	}
	for _, c := range comments {
		j.handleComment(ctx, s, pr, cp, amend, c, &st)
		if cp != nil {
			cp.LastCommentID = c.ID
			amend.Touch()
		}
	}
	if amend != nil {
		return st, amend.Commit(ctx, s.store)
	}
	return st, nil
}

func (j *job) now() time.Time {
	if j.env.Now != nil {
		return j.env.Now()
	}
	return time.Now()
}

// handleComment acknowledges a comment's command, checks its author, and
// applies it; anything refused gets 👎 and a reply saying why.
func (j *job) handleComment(ctx context.Context, s *session, pr github.PR, cp *state.Checkpoint, amend *runner.Amendment, c github.Comment, st *steer) {
	if c.AuthorType == "Bot" || strings.EqualFold(c.Author, j.in.Bot) {
		return
	}
	cmd, err := ParseCommand(c.Body, goalNames(s))
	if errors.Is(err, ErrNotCommand) {
		return
	}
	_ = j.client.React(ctx, j.owner, j.repo, c.ID, "eyes")
	if err == nil {
		err = j.authorize(ctx, s, c.Author, cmd)
	}
	if err == nil {
		err = j.apply(ctx, s, pr, cp, amend, cmd, c, st)
	}
	if err != nil {
		_ = j.client.React(ctx, j.owner, j.repo, c.ID, "-1")
		j.reply(ctx, s, c, err.Error())
		return
	}
	_ = j.client.React(ctx, j.owner, j.repo, c.ID, "+1")
}

func (j *job) reply(ctx context.Context, s *session, c github.Comment, text string) {
	if _, err := j.client.Comment(ctx, j.owner, j.repo, s.pr, fmt.Sprintf("@%s: %s", c.Author, text)); err != nil {
		j.a.Warningf("reply to comment %d: %s", c.ID, j.mask(err.Error()))
	}
}

func goalNames(s *session) []string {
	names := make([]string, len(s.cfg.Goals))
	for i, g := range s.cfg.Goals {
		names[i] = g.Name
	}
	return names
}

// authorize lets anyone ask for status or help; the other commands need
// write, maintain or admin permission, and a place among [review]
// approvers when the config lists any.
func (j *job) authorize(ctx context.Context, s *session, author string, cmd Command) error {
	if cmd.Verb == Status || cmd.Verb == Help {
		return nil
	}
	perm, err := j.client.Permission(ctx, j.owner, j.repo, author)
	if err != nil {
		return fmt.Errorf("your permission could not be checked (%s), so /loop %s was not carried out", j.mask(err.Error()), cmd.Verb)
	}
	if perm != "admin" && perm != "write" {
		return fmt.Errorf("/loop %s needs write permission on %s/%s; you have %s", cmd.Verb, j.owner, j.repo, perm)
	}
	if list := s.cfg.Review.Approvers; len(list) > 0 && !slices.ContainsFunc(list, func(a string) bool { return strings.EqualFold(a, author) }) {
		return fmt.Errorf("/loop %s is limited to the approvers the loop config lists ([review] approvers)", cmd.Verb)
	}
	return nil
}

// apply carries out an authorized command.
func (j *job) apply(ctx context.Context, s *session, pr github.PR, cp *state.Checkpoint, amend *runner.Amendment, cmd Command, c github.Comment, st *steer) error {
	switch cmd.Verb {
	case Help:
		j.reply(ctx, s, c, helpText)
		return nil
	case Status:
		st.status = true
		return nil
	}
	if cp == nil {
		if cmd.Verb == RunLoop {
			return errors.New("the loop has not run on this pull request yet; it starts with the next push, or re-run the pull_request workflow")
		}
		return errors.New("the loop has not run on this pull request yet")
	}
	if cp.Commit != pr.HeadSHA {
		return fmt.Errorf("the pull request's head moved to %s since the loop last ran on %s; the loop runs on the new head with the next pull_request event, and asks again", short(pr.HeadSHA), short(cp.Commit))
	}
	switch cmd.Verb {
	case Approve, Reject:
		return j.decide(cp, amend, cmd, c, st)
	case Stop:
		if cp.Status.Terminal() {
			return fmt.Errorf("the run is already over (%s)", cp.Status)
		}
		amend.Stop(fmt.Sprintf("stopped by @%s with /loop stop", c.Author))
		st.status = true
	case RunLoop:
		st.run = true
	}
	return nil
}

// decide records an approval or a rejection of a pending review, bound to
// the snapshot under review; the loop then resumes in this job.
func (j *job) decide(cp *state.Checkpoint, amend *runner.Amendment, cmd Command, c github.Comment, st *steer) error {
	goal, err := pendingGoal(cp.Verdicts, cmd.Goal)
	if err != nil {
		return err
	}
	amend.Decide(gate.Decision{Goal: goal, Approved: cmd.Verb == Approve, By: c.Author, Reason: cmd.Reason, Snapshot: cp.Snapshot})
	st.run = true
	return nil
}

// pendingGoal is the goal a decision is about: the one named, which must
// have a review pending, or else the only goal with one.
func pendingGoal(verdicts []gate.Verdict, named string) (string, error) {
	var pending []string
	for _, v := range verdicts {
		if slices.ContainsFunc(v.Checks, func(c gate.CheckVerdict) bool { return c.ReviewRequested }) {
			pending = append(pending, v.Goal)
		}
	}
	switch {
	case named != "" && slices.Contains(pending, named):
		return named, nil
	case named != "":
		return "", fmt.Errorf("no review of goal %s is pending", named)
	case len(pending) == 1:
		return pending[0], nil
	case len(pending) == 0:
		return "", errors.New("no review is pending")
	}
	return "", fmt.Errorf("reviews of %s are pending: name the goal, e.g. /loop approve %s", strings.Join(pending, ", "), pending[0])
}

const helpText = "loop-action commands, one per comment:\n\n" +
	"- `/loop approve [goal]` approves the review the loop is waiting for (the goal can be left out when only one waits)\n" +
	"- `/loop reject [goal] <reason>` rejects it; the builders get the reason and try again\n" +
	"- `/loop run` runs the loop again (after a budget was raised, say)\n" +
	"- `/loop stop` stops the run; `/loop run` resumes it\n" +
	"- `/loop status` refreshes the loop's comment\n" +
	"- `/loop help` shows this\n\n" +
	"approve, reject, run and stop need write permission on the repository."
