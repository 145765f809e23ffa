package runner

import (
	"slices"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
)

// ruling is what a ruling changed: the goals it newly satisfied and those
// it revoked, in verdict order.
type ruling struct{ newly, revoked []string }

// rule makes m the run's last measurement, and records the ruling in the
// ledger: goals newly satisfied, goals revoked, reviews requested, and the
// ruling itself.
func (r *run) rule(it int, m measurement) ruling {
	verdicts, snapshot := m.verdicts, m.snapshot
	r.trace(it, r.cp.Verdicts, m)
	var ru ruling
	before := map[string]gate.Verdict{}
	for _, v := range r.cp.Verdicts {
		before[v.Goal] = v
	}
	satisfied, passed, checks := 0, 0, 0
	for _, v := range verdicts {
		passed, checks = passed+v.Passed, checks+v.Total
		was, had := before[v.Goal]
		switch {
		case v.Satisfied && (!had || !was.Satisfied):
			ru.newly = append(ru.newly, v.Goal)
			r.rec.Record(ledger.Event{Type: ledger.GoalSatisfied, Iteration: it, Goal: v.Goal})
		case !v.Satisfied && had && was.Satisfied:
			ru.revoked = append(ru.revoked, v.Goal)
			r.rec.Record(ledger.Event{Type: ledger.GoalRevoked, Iteration: it, Goal: v.Goal, Reason: firstFailure(v)})
		}
		if v.Satisfied {
			satisfied++
		}
		for _, c := range v.Checks {
			if c.ReviewRequested && !requested(was, c.Index, snapshot, r.cp.Snapshot) {
				r.rec.Record(ledger.Event{Type: ledger.ReviewRequested, Iteration: it, Goal: v.Goal, Snapshot: snapshot, Reason: c.Evidence})
			}
		}
	}
	r.rec.Record(ledger.Event{Type: ledger.GateEvaluated, Iteration: it, Satisfied: satisfied, Goals: len(verdicts),
		Passed: passed, Checks: checks, Signature: gate.Signature(verdicts)})
	r.cp.Verdicts, r.cp.Snapshot = verdicts, snapshot
	return ru
}

// requested reports whether the same review was already requested for the
// same snapshot, so that a pause is announced once.
func requested(was gate.Verdict, index int, snapshot, lastSnapshot string) bool {
	if snapshot != lastSnapshot || index >= len(was.Checks) {
		return false
	}
	return was.Checks[index].ReviewRequested
}

// firstFailure is the evidence of a goal's first check that does not pass.
func firstFailure(v gate.Verdict) string {
	for _, c := range v.Checks {
		if c.Status != gate.Pass {
			return c.Evidence
		}
	}
	return ""
}

// spendRevisions charges one revision to each builder that ran while one
// of its goals is still unsatisfied.
func (r *run) spendRevisions(ran []string) {
	for _, name := range ran {
		n, _ := r.cfg.Node(name)
		if slices.ContainsFunc(n.Goals, func(g string) bool { return !satisfied(r.cp.Verdicts, g) }) {
			r.cp.Revisions[name]++
		}
	}
}

func satisfied(verdicts []gate.Verdict, goal string) bool {
	for _, v := range verdicts {
		if v.Goal == goal {
			return v.Satisfied
		}
	}
	return false
}

// progress updates the progress signature and the count of iterations in
// a row that did not change it.
func (r *run) progress() {
	sig := gate.Signature(r.cp.Verdicts)
	if sig == r.cp.Signature {
		r.cp.Stale++
	} else {
		r.cp.Stale = 0
	}
	r.cp.Signature = sig
}

// refreshStages closes open stages whose goals are all satisfied and opens
// the stages whose predecessors have all closed, until nothing changes.
// It returns the stages closed.
func (r *run) refreshStages() []string {
	var closed []string
	for changed := true; changed; {
		changed = false
		for _, st := range r.cfg.Stages {
			switch r.cp.Stages[st.Name] {
			case "open":
				if allSatisfied(r.cp.Verdicts, r.cfg.StageGoals(st.Name)) && len(r.cp.Verdicts) > 0 {
					r.cp.Stages[st.Name], changed = "closed", true
					closed = append(closed, st.Name)
					r.rec.Record(ledger.Event{Type: ledger.StageClosed, Iteration: r.cp.Iteration, Stage: st.Name})
				}
			case "closed":
			default:
				if afterClosed(r.cp.Stages, st) {
					r.cp.Stages[st.Name], changed = "open", true
					r.rec.Record(ledger.Event{Type: ledger.StageOpened, Iteration: r.cp.Iteration, Stage: st.Name})
				}
			}
		}
	}
	return closed
}

func allSatisfied(verdicts []gate.Verdict, goals []string) bool {
	for _, g := range goals {
		if !satisfied(verdicts, g) {
			return false
		}
	}
	return len(goals) > 0
}

func afterClosed(stages map[string]string, st loop.Stage) bool {
	for _, a := range st.After {
		if stages[a] != "closed" {
			return false
		}
	}
	return true
}
