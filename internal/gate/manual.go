package gate

import (
	"cmp"
	"fmt"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

// evalManual rules on a manual check. A review is only requested once every
// other check of the goal passes, and a decision only counts for the
// workspace snapshot it was made on.
func evalManual(g loop.Goal, i int, ch loop.Check, others []CheckVerdict, ev Evidence) CheckVerdict {
	cv := CheckVerdict{Index: i, Type: ch.Type, Status: Pending}
	for k, o := range others {
		if k != i && g.Checks[k].Type != loop.CheckManual && o.Status != Pass {
			cv.Evidence = "review not requested yet: the goal's other checks must pass first"
			return cv
		}
	}
	if ev.Snapshot == "" {
		cv.Status, cv.Evidence = Fail, "the workspace snapshot could not be taken, so no review can be bound to it"
		return cv
	}
	snap := phrase.Short(ev.Snapshot)
	question := cmp.Or(ch.Prompt, fmt.Sprintf("approve goal %q?", g.Name))
	var stale *Decision
	for k := len(ev.Decisions) - 1; k >= 0; k-- {
		d := ev.Decisions[k]
		switch {
		case d.Goal != g.Name:
		case d.Snapshot == ev.Snapshot && d.Approved:
			cv.Status, cv.Evidence = Pass, fmt.Sprintf("approved by %s for snapshot %s", d.By, snap)
			return cv
		case d.Snapshot == ev.Snapshot:
			cv.Status, cv.Evidence = Fail, fmt.Sprintf("rejected by %s for snapshot %s: %s", d.By, snap, cmp.Or(phrase.Line(d.Reason, 200), "no reason given"))
			return cv
		case stale == nil:
			stale = &d
		}
	}
	cv.ReviewRequested = true
	if stale != nil {
		verb := "approval"
		if !stale.Approved {
			verb = "rejection"
		}
		cv.Evidence = fmt.Sprintf("review re-opened: the %s by %s was for snapshot %s, the workspace is now %s: %s",
			verb, stale.By, phrase.Short(stale.Snapshot), snap, question)
		return cv
	}
	cv.Evidence = fmt.Sprintf("awaiting review of snapshot %s: %s", snap, question)
	return cv
}
