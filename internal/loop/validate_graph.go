package loop

import (
	"fmt"
	"slices"
	"strings"
)

func nodePath(i int, key string) string { return fmt.Sprintf("node[%d].%s", i, key) }

func goalPath(i int, key string) string { return fmt.Sprintf("goal[%d].%s", i, key) }

func checkPath(gi, ci int, key string) string {
	return fmt.Sprintf("goal[%d].check[%d].%s", gi, ci, key)
}

func stagePath(i int, key string) string { return fmt.Sprintf("stage[%d].%s", i, key) }

// names checks that every item has a valid, unique name.
func (v *validator) names(kind string, ns names, at func(i int, key string) string) {
	for i, n := range ns.list {
		switch j := ns.first[n]; {
		case n == "":
			v.errorf(at(i, "name"), "%s #%d has no name", kind, i+1)
		case !nameRE.MatchString(n):
			v.errorf(at(i, "name"), "%s name %q may contain only letters, digits, '-' and '_', and must start with a letter or digit", kind, n)
		case j != i:
			v.errorf(at(i, "name"), "duplicate %s name %q (first defined on line %d)", kind, n, v.c.pos(at(j, "name")).Line)
		}
	}
}

// refs checks that each name in list is one of known and appears once.
func (v *validator) refs(at, owner, kind string, list []string, known names) {
	seen := make(map[string]bool, len(list))
	for _, r := range list {
		switch {
		case known.index(r) < 0:
			v.errorf(at, "%s: unknown %s %q%s", owner, kind, r, v.didYouMean(r, known))
		case seen[r]:
			v.errorf(at, "%s: %s %q is listed twice", owner, kind, r)
		}
		seen[r] = true
	}
}

// didYouMean suggests the known name closest to a mistyped one.
func (v *validator) didYouMean(name string, known names) string {
	if s := v.suggest.closest(name, known.list); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// named is what the config's named items, nodes, goals and stages, share.
type named interface{ itemName() string }

func (n Node) itemName() string  { return n.Name }
func (g Goal) itemName() string  { return g.Name }
func (s Stage) itemName() string { return s.Name }

// namesOf lists the names of items, in order.
func namesOf[T named](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.itemName()
	}
	return out
}

// indexOf is the index of the first item called name, or -1.
func indexOf[T named](items []T, name string) int {
	return slices.IndexFunc(items, func(it T) bool { return it.itemName() == name })
}

func (v *validator) nodes() {
	c := v.c
	v.names("node", v.ix.nodes, nodePath)
	for i, n := range c.Nodes {
		v.node(i, n)
	}
	cycles := v.ix.graph.cycles()
	for _, cyc := range cycles {
		v.errorf(nodePath(cyc[0], "after"), "nodes form a cycle: %s", cyclePath(v.ix.nodes.list, cyc))
	}
	if len(cycles) == 0 {
		v.mixedWaves()
	}
}

// mixedWaves warns of an isolated node that shares a wave with a builder
// working in the loop root: the runner cannot tell the isolated node's
// direct writes to the root from the other's work there, so in that wave
// only the guarded paths are checked.
// Nodes whose stages can never be open at once (one stage comes after the
// other) never run together, whatever their wave. A hostile config cannot
// make this costly: the stage walks share a budget, and once it is spent,
// or once maxMixedWarnings were given, nothing more is looked at.
func (v *validator) mixedWaves() {
	st := stageWalker{direct: map[string][]string{}, budget: 1 << 16}
	for _, s := range v.c.Stages {
		st.direct[s.Name] = append(st.direct[s.Name], s.After...)
	}
	warned := 0
	for w, layer := range v.ix.graph.layers() {
		for _, i := range layer {
			n := v.c.Nodes[i]
			if !n.Isolate || warned == maxMixedWarnings || st.budget <= 0 {
				continue
			}
			for _, k := range layer {
				if o := v.c.Nodes[k]; !o.Isolate && o.Role == RoleBuilder && st.together(n.Stage, o.Stage) {
					v.report(Warning, []string{nodePath(i, "isolate"), nodePath(i, "name")},
						"node %q is isolated but runs in wave %d with builder %q, which works in the loop root: a direct write of %q to the root cannot be told from %q's work, so that wave guards only protected paths and .git; give it a wave of its own with after",
						n.Name, w+1, o.Name, n.Name, o.Name)
					warned++
					break
				}
			}
		}
	}
}

// maxMixedWarnings bounds the warnings mixedWaves gives.
const maxMixedWarnings = 10

// stageWalker answers whether two stages can be open at once.
type stageWalker struct {
	direct map[string][]string // stage -> the stages it comes after
	budget int                 // steps left for all walks
}

// together reports whether nodes of stages a and b can run at once: either
// has no stage, they share one, or neither comes after the other.
func (s *stageWalker) together(a, b string) bool {
	return a == "" || b == "" || a == b || !s.after(a, b) && !s.after(b, a)
}

// after reports whether stage a comes after stage b, directly or not. With
// the budget spent it answers false, which keeps a warning rather than
// dropping it.
func (s *stageWalker) after(a, b string) bool {
	seen := map[string]bool{}
	todo := slices.Clone(s.direct[a])
	for len(todo) > 0 && s.budget > 0 {
		s.budget--
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if x == b {
			return true
		}
		if !seen[x] {
			seen[x] = true
			todo = append(todo, s.direct[x]...)
		}
	}
	return false
}

func (v *validator) node(i int, n Node) {
	owner := fmt.Sprintf("node %q", n.Name)
	if n.Role != RoleBuilder && n.Role != RoleJudge {
		v.errorf(nodePath(i, "role"), "%s: role must be %q or %q, not %q", owner, RoleBuilder, RoleJudge, n.Role)
	}
	v.nodeProvider(i, n, owner)
	v.refs(nodePath(i, "goals"), owner, "goal", n.Goals, v.ix.goals)
	v.refs(nodePath(i, "after"), owner, "node", n.After, v.ix.nodes)
	if slices.Contains(n.After, n.Name) {
		v.errorf(nodePath(i, "after"), "%s cannot run after itself", owner)
	}
	if n.Stage != "" && v.ix.stages.index(n.Stage) < 0 {
		v.errorf(nodePath(i, "stage"), "%s: unknown stage %q%s", owner, n.Stage, v.didYouMean(n.Stage, v.ix.stages))
	}
	switch {
	case n.Role == RoleJudge && len(n.Goals) > 0:
		v.errorf(nodePath(i, "goals"), "%s: a judge takes no goals; it rules on the goals whose judge checks name it", owner)
	case n.Role == RoleBuilder && len(n.Goals) == 0:
		v.report(Warning, []string{nodePath(i, "name"), fmt.Sprintf("node[%d]", i)}, "%s is a builder with no goals: its prompt will name no checks", owner)
	case n.Role == RoleJudge && !v.ix.judged[n.Name] && !v.ix.judgeDangle:
		v.report(Warning, []string{nodePath(i, "name"), fmt.Sprintf("node[%d]", i)}, "%s is a judge that no judge check names: its verdicts are unused", owner)
	}
}

func (v *validator) nodeProvider(i int, n Node, owner string) {
	if n.Provider == "" {
		v.errorf(fmt.Sprintf("node[%d]", i), "%s needs a provider", owner)
		return
	}
	p, ok := v.c.Providers[n.Provider]
	if !ok {
		v.errorf(nodePath(i, "provider"), "%s: unknown provider %q%s", owner, n.Provider, v.didYouMean(n.Provider, v.ix.providers))
		return
	}
	switch _, defined := p.Tiers[n.Tier]; {
	case !slices.Contains(TierLadder, n.Tier):
		v.errorf(nodePath(i, "tier"), "%s: unknown tier %q (tiers are %s)", owner, n.Tier, strings.Join(TierLadder, ", "))
	case n.Tier != TierStandard && !defined:
		v.errorf(nodePath(i, "tier"), "%s: provider %q defines no %q tier", owner, n.Provider, n.Tier)
	}
}

func cyclePath(names []string, cyc []int) string {
	parts := make([]string, 0, len(cyc)+1)
	for _, i := range cyc {
		parts = append(parts, fmt.Sprintf("%q", names[i]))
	}
	parts = append(parts, fmt.Sprintf("%q", names[cyc[0]]))
	return strings.Join(parts, " runs after ")
}

func (v *validator) stages() {
	names := v.ix.stages.list
	v.names("stage", v.ix.stages, stagePath)
	for i, s := range v.c.Stages {
		owner := fmt.Sprintf("stage %q", s.Name)
		v.refs(stagePath(i, "after"), owner, "stage", s.After, v.ix.stages)
		if slices.Contains(s.After, s.Name) {
			v.errorf(stagePath(i, "after"), "%s cannot come after itself", owner)
		}
		v.refs(stagePath(i, "goals"), owner, "goal", s.Goals, v.ix.goals)
		if !v.ix.stageGoals[s.Name] && !v.ix.stageDangle {
			v.report(Warning, []string{stagePath(i, "name"), fmt.Sprintf("stage[%d]", i)},
				"%s has no goals to close it (no goals key, and no builder in it advances a goal): it never closes, and stages after it never open", owner)
		}
	}
	for _, cyc := range stageGraph(v.c.Stages).cycles() {
		v.errorf(stagePath(cyc[0], "after"), "stages form a cycle: %s", strings.ReplaceAll(cyclePath(names, cyc), "runs after", "comes after"))
	}
}
