package runner

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
)

// Perturbation kinds.
const (
	perturbReorder  = "reorder"
	perturbEscalate = "escalate"
	perturbReframe  = "reframe"
)

// perturbation is how a stalled iteration varies its approach. It reaches
// builders only, never a judge.
type perturbation struct {
	kind      string // "" when the run is not stalled
	seed      uint64
	directive string
	rng       *rand.Rand
}

// perturbationSeed derives the seed from the run id and the iteration, so
// a run replays the same choices.
func perturbationSeed(runID string, it int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", runID, it)
	return h.Sum64()
}

// perturbation decides whether iteration it is perturbed, and how, and
// records the choice. Escalation raises every builder one tier; when none
// can go higher, the iteration is reframed instead.
func (r *run) perturbation(it int) perturbation {
	after := r.cfg.Stop.PerturbAfter
	if after <= 0 || r.cp.Stale < after {
		return perturbation{}
	}
	seed := perturbationSeed(r.cp.RunID, it)
	p := perturbation{seed: seed, rng: rand.New(rand.NewPCG(seed, seed>>1|1))}
	kinds := []string{perturbReorder, perturbEscalate, perturbReframe}
	p.kind = kinds[p.rng.IntN(len(kinds))]
	if p.kind == perturbEscalate && !r.escalateTiers() {
		p.kind = perturbReframe
	}
	p.directive = directives[p.kind]
	r.rec.Record(ledger.Event{Type: ledger.Perturbed, Iteration: it, Kind: p.kind, Seed: seed, Stale: r.cp.Stale, Reason: p.directive})
	return p
}

var directives = map[string]string{
	perturbReorder:  "The nodes of each wave run in a different order this time.",
	perturbEscalate: "Builders run one tier stronger from now on.",
	perturbReframe: "The last iterations made no progress. Step back: re-read the failing evidence, " +
		"question the assumption behind the approach so far, and try a substantially different one.",
}

// escalateTiers moves every builder one step up the tier ladder, where its
// provider defines the next tier. It reports whether any builder moved.
func (r *run) escalateTiers() bool {
	moved := false
	for _, n := range r.cfg.Nodes {
		if n.Role != loop.RoleBuilder {
			continue
		}
		next := nextTier(r.cfg.Providers[n.Provider], r.tier(n))
		if next != "" {
			r.cp.Tiers[n.Name] = next
			moved = true
		}
	}
	return moved
}

// nextTier is the first tier above cur that the provider offers; standard
// always exists (the command as written).
func nextTier(p loop.Provider, cur string) string {
	i := slices.Index(loop.TierLadder, cur)
	for _, t := range loop.TierLadder[i+1:] {
		if _, ok := p.Tiers[t]; ok || t == loop.TierStandard {
			return t
		}
	}
	return ""
}

// order returns the wave's nodes in the order they start: shuffled when
// the perturbation reorders, as given otherwise.
func (p perturbation) order(nodes []loop.Node) []loop.Node {
	if p.kind != perturbReorder {
		return nodes
	}
	out := slices.Clone(nodes)
	p.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
