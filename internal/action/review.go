package action

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/phrase"
)

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
		if m == nil || m[1] != loop || !p.ourBot(c) {
			continue
		}
		out = append(out, reviewRequest{ID: c.ID, Goal: m[2], Snapshot: m[3]})
	}
	return out
}

// ourBot reports whether the action's own identity wrote c: its login, and
// for a "[bot]" login the type Bot too, so that no user can pass as it.
func (p *publisher) ourBot(c github.Comment) bool {
	if !strings.EqualFold(c.Author, p.in.Bot) {
		return false
	}
	return !strings.HasSuffix(strings.ToLower(p.in.Bot), "[bot]") || c.AuthorType == "Bot"
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
