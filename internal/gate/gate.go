package gate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/loop-action/loop-action/internal/loop"
)

// Status is a check's or a goal's state.
type Status string

// Statuses.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Pending Status = "pending" // waiting for a human review
)

// Icon is the status's mark in reports: ✅ pass, ⏸ pending, ❌ fail.
func (s Status) Icon() string {
	switch s {
	case Pass:
		return "✅"
	case Pending:
		return "⏸"
	}
	return "❌"
}

// CheckVerdict is the ruling on one check.
type CheckVerdict struct {
	Index    int    `json:"index"`
	Type     string `json:"type"`
	Status   Status `json:"status"`
	Evidence string `json:"evidence"`
	// ReviewRequested is set on a pending manual check whose review should
	// be requested now, for the snapshot in the evidence.
	ReviewRequested bool `json:"review_requested,omitempty"`
}

// Verdict is the ruling on one goal.
type Verdict struct {
	Goal      string         `json:"goal"`
	Blocking  bool           `json:"blocking"`
	Satisfied bool           `json:"satisfied"`
	Passed    int            `json:"passed"`
	Total     int            `json:"total"`
	Checks    []CheckVerdict `json:"checks"`
}

// Status is the goal's state: pass when satisfied, pending when nothing
// failed but a review is outstanding, fail otherwise.
func (v Verdict) Status() Status {
	switch {
	case v.Satisfied:
		return Pass
	case slices.ContainsFunc(v.Checks, func(c CheckVerdict) bool { return c.Status == Fail }):
		return Fail
	}
	return Pending
}

// Evaluate rules on every goal of cfg from the evidence, in config order.
// A check without evidence fails.
func Evaluate(cfg *loop.Config, ev Evidence) []Verdict {
	metrics := parseMetrics(ev.Metrics, cfg.Metrics.Timeout.Duration)
	out := make([]Verdict, 0, len(cfg.Goals))
	for _, g := range cfg.Goals {
		v := Verdict{Goal: g.Name, Blocking: g.IsBlocking(), Total: len(g.Checks), Checks: make([]CheckVerdict, len(g.Checks))}
		for i, ch := range g.Checks {
			if ch.Type != loop.CheckManual {
				v.Checks[i] = evalCheck(cfg, g, i, ch, ev, metrics)
			}
		}
		for i, ch := range g.Checks {
			if ch.Type == loop.CheckManual {
				v.Checks[i] = evalManual(g, i, ch, v.Checks, ev)
			}
		}
		for _, c := range v.Checks {
			if c.Status == Pass {
				v.Passed++
			}
		}
		v.Satisfied = v.Total > 0 && v.Passed == v.Total
		out = append(out, v)
	}
	return out
}

func evalCheck(cfg *loop.Config, g loop.Goal, i int, ch loop.Check, ev Evidence, m metricValues) CheckVerdict {
	id := CheckID{Goal: g.Name, Index: i}
	cv := CheckVerdict{Index: i, Type: ch.Type}
	switch {
	case ch.IsCommand():
		r, ok := ev.Commands[id]
		cv.Status, cv.Evidence = commandRuling(r, ok, ch)
	case ch.Type == loop.CheckFileExists:
		r, ok := ev.Files[id]
		cv.Status, cv.Evidence = fileRuling(r, ok, ch)
	case ch.Type == loop.CheckRegex:
		r, ok := ev.Files[id]
		cv.Status, cv.Evidence = regexRuling(r, ok, ch)
	case ch.Type == loop.CheckMetric:
		cv.Status, cv.Evidence = metricRuling(m, ch)
	case ch.Type == loop.CheckJudge:
		cv.Status, cv.Evidence = judgeRuling(cfg, g, ch, ev.Judges)
	default:
		cv.Status, cv.Evidence = Fail, fmt.Sprintf("unknown check type %q", ch.Type)
	}
	return cv
}

// OverallSuccess reports whether the verdicts make the run a success:
// enough blocking goals are satisfied ([success] min_pass_rate, all by
// default). Without any blocking goal there is no success.
func OverallSuccess(cfg *loop.Config, verdicts []Verdict) bool {
	satisfied, blocking := Blocking(verdicts)
	if blocking == 0 {
		return false
	}
	rate := cfg.Success.MinPassRate
	if rate <= 0 || rate > 1 {
		rate = 1
	}
	return float64(satisfied) >= rate*float64(blocking)-1e-9
}

// Blocking counts the blocking goals and how many of them are satisfied.
func Blocking(verdicts []Verdict) (satisfied, blocking int) {
	for _, v := range verdicts {
		if v.Blocking {
			blocking++
			if v.Satisfied {
				satisfied++
			}
		}
	}
	return satisfied, blocking
}

// AwaitingReview reports whether only human review stands between the
// verdicts and overall success: reviews have been requested, and approving
// them would make the run a success.
func AwaitingReview(cfg *loop.Config, verdicts []Verdict) bool {
	if OverallSuccess(cfg, verdicts) {
		return false
	}
	approved := make([]Verdict, len(verdicts))
	requested := false
	for i, v := range verdicts {
		approved[i] = v
		if v.Satisfied || !onlyReviewLeft(v) {
			continue
		}
		requested = true
		approved[i].Satisfied = true
	}
	return requested && OverallSuccess(cfg, approved)
}

// onlyReviewLeft reports whether every check of the goal that does not
// pass is a manual check whose review has been requested.
func onlyReviewLeft(v Verdict) bool {
	for _, c := range v.Checks {
		if c.Status != Pass && !c.ReviewRequested {
			return false
		}
	}
	return true
}

// Signature summarises the verdicts for progress detection: the sorted
// "goal:satisfied:passed/total" of every goal. Iterations with the same
// signature made no progress.
func Signature(verdicts []Verdict) string {
	parts := make([]string, len(verdicts))
	for i, v := range verdicts {
		parts[i] = fmt.Sprintf("%s:%t:%d/%d", v.Goal, v.Satisfied, v.Passed, v.Total)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
