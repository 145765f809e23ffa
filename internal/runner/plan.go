package runner

import (
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
)

// planWave decides which nodes of a wave run, recording why the others
// are skipped, and builds the prompts of those that run.
func (r *iteration) planWave(wave int, nodes []loop.Node, p perturbation) []*nodeRun {
	var runs []*nodeRun
	pr := r.run.prompts(r.n, p)
	for _, n := range nodes {
		nr := &nodeRun{node: n, wave: wave, tier: r.run.tier(n)}
		runs = append(runs, nr)
		nr.skip = r.skipReason(n)
		if nr.skip != "" {
			r.rec.Record(ledger.Event{Type: ledger.NodeSkipped, Iteration: r.n, Wave: wave, Node: n.Name, Reason: nr.skip})
			continue
		}
		nr.queued = true
		nr.prompt = pr.prompt(n)
		r.rec.Record(ledger.Event{Type: ledger.NodeDispatched, Iteration: r.n, Wave: wave, Node: n.Name,
			Role: n.Role, Provider: n.Provider, Tier: nr.tier})
	}
	return runs
}

// tier is the tier a node runs on now: builders may have been escalated.
func (r *run) tier(n loop.Node) string {
	if t, ok := r.cp.Tiers[n.Name]; ok && n.Role == loop.RoleBuilder {
		return t
	}
	return n.Tier
}

// skipReason says why a node must not run this iteration, or "".
func (r *iteration) skipReason(n loop.Node) string {
	if n.Stage != "" && r.cp.Stages[n.Stage] != "open" {
		return fmt.Sprintf("stage %s is not open (%s)", n.Stage, stageState(r.cp.Stages[n.Stage]))
	}
	if n.Role == loop.RoleJudge {
		return dependence(r.cfg, n)
	}
	if max := r.cfg.Stop.MaxRevisionsPerNode; max > 0 && r.cp.Revisions[n.Name] >= max {
		return fmt.Sprintf("its revisions are spent (%d of max_revisions_per_node = %d)", r.cp.Revisions[n.Name], max)
	}
	if len(n.Goals) > 0 && allSatisfied(r.cp.Verdicts, n.Goals) {
		return "its goals are satisfied (" + strings.Join(n.Goals, ", ") + ")"
	}
	return ""
}

func stageState(s string) string {
	if s == "" {
		return "waiting"
	}
	return s
}

// dependence refuses a judge that shares a provider with a builder of a
// goal it judges; validate rejects such configs, and the runner holds the
// line too.
func dependence(cfg *loop.Config, judge loop.Node) string {
	for _, g := range cfg.Goals {
		for _, ch := range g.Checks {
			if ch.Type != loop.CheckJudge || ch.Node != judge.Name {
				continue
			}
			for _, b := range cfg.Builders(g.Name) {
				if b.Provider == judge.Provider {
					return fmt.Sprintf("refused: it shares provider %s with builder %s of goal %s", judge.Provider, b.Name, g.Name)
				}
			}
		}
	}
	return ""
}
