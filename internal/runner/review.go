package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
)

// Review is a human's decision on a review a run asked for, as one face
// received it: `loop-action review approve|reject` or a /loop comment.
type Review struct {
	Goal    string // the goal decided; "" is the only goal with a review pending
	Approve bool   // else a rejection
	By      string // who decided: the CLI's user, or the comment's author
	Reason  string // why; a rejection needs one
	Comment int64  // the pull-request comment it came from; 0 for none
}

// ReviewError says why a decision has no review to answer.
type ReviewError struct {
	Goal    string   // the goal named, "" when none was
	Pending []string // the goals with a review pending, in config order
}

func (e *ReviewError) Error() string {
	switch {
	case e.Goal != "" && len(e.Pending) == 0:
		return fmt.Sprintf("no review of goal %q is pending: the run asks for one when the goal's other checks pass", e.Goal)
	case e.Goal != "":
		return fmt.Sprintf("no review of goal %q is pending; %s", e.Goal, pendingList(e.Pending))
	case len(e.Pending) == 0:
		return "no review is pending: the run asks for one when a goal's other checks pass"
	}
	return pendingList(e.Pending) + ": name the goal"
}

func pendingList(goals []string) string {
	q := make([]string, len(goals))
	for i, g := range goals {
		q[i] = fmt.Sprintf("%q", g)
	}
	if len(q) == 1 {
		return "a review of goal " + q[0] + " is pending"
	}
	return "reviews of goals " + strings.Join(q, ", ") + " are pending"
}

// PendingReview is the goal a decision is about, by the run's last
// verdicts: the goal named, which must have a review pending, or else the
// only goal with one. Anything else is a *ReviewError.
func PendingReview(verdicts []gate.Verdict, named string) (string, error) {
	pending := pendingReviews(verdicts)
	switch {
	case named != "" && slices.Contains(pending, named):
		return named, nil
	case named == "" && len(pending) == 1:
		return pending[0], nil
	}
	return "", &ReviewError{Goal: named, Pending: pending}
}

// pendingReviews are the goals with a review pending, in verdict order.
func pendingReviews(verdicts []gate.Verdict) []string {
	var pending []string
	for _, v := range verdicts {
		if slices.ContainsFunc(v.Checks, func(c gate.CheckVerdict) bool { return c.ReviewRequested }) {
			pending = append(pending, v.Goal)
		}
	}
	return pending
}
