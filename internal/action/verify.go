package action

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
)

// verifier checks, through the API, every review decision a run loads from
// the state branch before the gate sees it: anyone who can push to that
// branch can write a decision, so a stored one counts only if the comment
// it came from still says so. A decision stands when its comment
//
//   - is on this pull request, written by the decision's author, not a bot,
//     and never edited;
//   - still parses to the same command: verb, goal (or none) and reason;
//   - has an author who has write permission now, and is among [review]
//     approvers when the config lists any;
//   - answers the bot's request to review the decision's snapshot (see
//     reviewRequest).
//
// One comment listing serves every decision; permissions are asked once
// per author. A branch's run (schedule, workflow_dispatch) has no pull
// request to check against, so it keeps no decision at all.
func (j *job) verifier(s *session) func(context.Context, []gate.Decision) ([]gate.Decision, []runner.DroppedDecision, error) {
	return func(ctx context.Context, ds []gate.Decision) ([]gate.Decision, []runner.DroppedDecision, error) {
		var all []github.Comment
		if s.pr > 0 {
			var err error
			if all, err = j.client.Comments(ctx, j.owner, j.repo, s.pr); err != nil {
				return nil, nil, err
			}
		}
		v := decisionCheck{j: j, s: s, byID: map[int64]github.Comment{}, reqs: j.pub().reviewRequests(all, s.cfg.Name)}
		for _, c := range all {
			v.byID[c.ID] = c
		}
		var kept []gate.Decision
		var dropped []runner.DroppedDecision
		for _, d := range ds {
			why, err := v.check(ctx, d)
			switch {
			case err != nil:
				return nil, nil, err
			case why == "":
				kept = append(kept, d)
			default:
				dropped = append(dropped, runner.DroppedDecision{Decision: d, Why: why})
			}
		}
		return kept, dropped, nil
	}
}

// decisionCheck is one verification pass.
type decisionCheck struct {
	j    *job
	s    *session
	byID map[int64]github.Comment
	reqs []reviewRequest
}

// check says why d does not stand, or "" when it does. An error means it
// could not be told (a permission lookup failed).
func (v decisionCheck) check(ctx context.Context, d gate.Decision) (string, error) {
	c, why := v.comment(d)
	if why == "" {
		why = v.command(d, c)
	}
	if why != "" {
		return why, nil
	}
	perm, err := v.j.pub().permission(ctx, c.Author)
	switch {
	case err != nil:
		return "", err
	case !writes(perm):
		return fmt.Sprintf("%s has %s permission on %s/%s now, not write", c.Author, perm, v.j.owner, v.j.repo), nil
	case !approver(v.s, c.Author):
		return fmt.Sprintf("%s is not among the [review] approvers", c.Author), nil
	}
	snap, ok := answered(v.reqs, d.Goal, c.ID)
	switch {
	case !ok:
		return fmt.Sprintf("no review of goal %s was requested before comment %d", d.Goal, c.ID), nil
	case snap != d.Snapshot:
		return fmt.Sprintf("comment %d answers the review request for snapshot %s, not %s", c.ID, phrase.Short(snap), phrase.Short(d.Snapshot)), nil
	}
	return "", nil
}

// comment finds d's comment and checks who wrote it and that it was not
// edited.
func (v decisionCheck) comment(d gate.Decision) (github.Comment, string) {
	if v.s.pr == 0 {
		return github.Comment{}, "a branch's run takes no stored decisions: only /loop commands on a pull request can be verified"
	}
	if d.Comment == 0 {
		return github.Comment{}, "it names no comment it came from (loop-action review, or written into the state by hand), so it cannot be verified"
	}
	c, ok := v.byID[d.Comment]
	switch {
	case !ok:
		return c, fmt.Sprintf("comment %d is not on pull request #%d", d.Comment, v.s.pr)
	case v.j.pub().fromBot(c):
		return c, fmt.Sprintf("comment %d was written by a bot", c.ID)
	case !strings.EqualFold(c.Author, d.By):
		return c, fmt.Sprintf("comment %d was written by %s, not %s", c.ID, c.Author, d.By)
	case c.Edited():
		return c, fmt.Sprintf("comment %d was edited after it was written", c.ID)
	}
	return c, ""
}

// command checks that c's body still says what d records.
func (v decisionCheck) command(d gate.Decision, c github.Comment) string {
	cmd, err := ParseCommand(c.Body, goalNames(v.s))
	want := Reject
	if d.Approved {
		want = Approve
	}
	switch {
	case err != nil:
		return fmt.Sprintf("comment %d holds no valid /loop command", c.ID)
	case cmd.Verb != want:
		return fmt.Sprintf("comment %d says /loop %s, not /loop %s", c.ID, cmd.Verb, want)
	case cmd.Goal != "" && cmd.Goal != d.Goal:
		return fmt.Sprintf("comment %d is about goal %s, not %s", c.ID, cmd.Goal, d.Goal)
	case cmd.Reason != d.Reason:
		return fmt.Sprintf("comment %d gives another reason", c.ID)
	}
	return ""
}

// A review request is the comment the bot posts when a run pauses for a
// human review: its hidden first line names the loop, the goal and the
// full workspace snapshot. An approval or rejection answers the latest
// request for its goal written before it (comment ids grow with time, on
// GitHub's clock), so nobody's decision can count for a snapshot that was
// not yet up for review when they wrote it.
type reviewRequest struct {
	ID       int64
	Goal     string
	Snapshot string
}

func reviewMarker(loop, goal, snapshot string) string {
	return fmt.Sprintf("<!-- loop-action:review loop=%s goal=%s snapshot=%s -->", loop, goal, snapshot)
}

var reviewMarkerRE = regexp.MustCompile(`^<!-- loop-action:review loop=([A-Za-z0-9][A-Za-z0-9_-]*) goal=([A-Za-z0-9][A-Za-z0-9_-]*) snapshot=([0-9a-f]{7,64}) -->$`)

// reviewRequests are the review requests of loop among comments: those
// written by the bot whose first line is the marker, oldest first.
func (p *publisher) reviewRequests(comments []github.Comment, loop string) []reviewRequest {
	var out []reviewRequest
	for _, c := range comments {
		first, _, _ := strings.Cut(c.Body, "\n")
		m := reviewMarkerRE.FindStringSubmatch(strings.TrimRight(first, "\r"))
		if m == nil || m[1] != loop || !c.WrittenBy(p.in.Bot) {
			continue
		}
		out = append(out, reviewRequest{ID: c.ID, Goal: m[2], Snapshot: m[3]})
	}
	return out
}

// answered is the snapshot the comment id answers for goal: that of the
// latest request for goal written before it.
func answered(reqs []reviewRequest, goal string, id int64) (string, bool) {
	snap, ok := "", false
	for _, r := range reqs {
		if r.Goal == goal && r.ID < id {
			snap, ok = r.Snapshot, true
		}
	}
	return snap, ok
}

// requestedEver reports whether a review of goal on snapshot was requested.
func requestedEver(reqs []reviewRequest, goal, snapshot string) bool {
	for _, r := range reqs {
		if r.Goal == goal && r.Snapshot == snapshot {
			return true
		}
	}
	return false
}

// postReviewRequest asks for a review of goal on snapshot in a comment of
// its own (so people are notified), and returns the request.
func (p *publisher) postReviewRequest(ctx context.Context, s *session, goal, snapshot, question string) (reviewRequest, error) {
	body := fmt.Sprintf("%s\n⏸ **Review wanted** for goal `%s` of loop `%s`, snapshot `%s` of %s:\n\n> %s\n\nApprove with `/loop approve %s`, or reject with `/loop reject %s <reason>`.",
		reviewMarker(s.cfg.Name, goal, snapshot), goal, s.cfg.Name, phrase.Short(snapshot), phrase.Short(s.head), escape(question), goal, goal)
	id, err := p.api.Comment(ctx, p.owner, p.repo, s.pr, body)
	if err != nil {
		return reviewRequest{}, fmt.Errorf("request review of goal %s: %w", goal, err)
	}
	return reviewRequest{ID: id, Goal: goal, Snapshot: snapshot}, nil
}
