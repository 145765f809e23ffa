package loop

import (
	"maps"
	"slices"
)

// names is one kind of named item (nodes, goals, stages, providers): the
// names in order and where each is first defined.
type names struct {
	list  []string
	first map[string]int
}

func newNames(list []string) names {
	first := make(map[string]int, len(list))
	for i, n := range list {
		if _, dup := first[n]; !dup {
			first[n] = i
		}
	}
	return names{list: list, first: first}
}

// index returns where name is first defined, or -1.
func (ns names) index(name string) int {
	if i, ok := ns.first[name]; ok {
		return i
	}
	return -1
}

// index holds what validation looks up again and again, computed once per
// Validate so that checking a config stays linear in its size however
// many nodes, goals and checks it has.
type index struct {
	nodes, goals, stages, providers names

	builders    map[string][]int // goal -> the builders that advance it, in config order
	judged      map[string]bool  // nodes that a judge check names
	judgeDangle bool             // a judge check names an unknown node
	stageDangle bool             // a node names an unknown stage
	stageGoals  map[string]bool  // stages that have goals to close them

	graph     graph            // the node graph
	ancestors map[int][]uint64 // node -> bitset of the nodes it runs after, directly or not (filled on demand)
}

func newIndex(c *Config) *index {
	ix := &index{
		nodes: newNames(namesOf(c.Nodes)), goals: newNames(namesOf(c.Goals)), stages: newNames(namesOf(c.Stages)),
		providers: newNames(slices.Sorted(maps.Keys(c.Providers))),
		builders:  map[string][]int{}, judged: map[string]bool{}, stageGoals: map[string]bool{},
		graph: nodeGraph(c.Nodes), ancestors: map[int][]uint64{},
	}
	for i, n := range c.Nodes {
		ix.stageDangle = ix.stageDangle || n.Stage != "" && ix.stages.index(n.Stage) < 0
		if n.Role != RoleBuilder {
			continue
		}
		for _, g := range slices.Compact(slices.Sorted(slices.Values(n.Goals))) {
			ix.builders[g] = append(ix.builders[g], i)
		}
		ix.stageGoals[n.Stage] = ix.stageGoals[n.Stage] || len(n.Goals) > 0
	}
	for _, s := range c.Stages {
		if i := ix.stages.index(s.Name); len(c.Stages[i].Goals) > 0 {
			ix.stageGoals[s.Name] = true
		}
	}
	for _, g := range c.Goals {
		for _, ch := range g.Checks {
			if ch.Type == CheckJudge {
				ix.judged[ch.Node] = true
				ix.judgeDangle = ix.judgeDangle || ch.Node != "" && ix.nodes.index(ch.Node) < 0
			}
		}
	}
	return ix
}

// reaches reports whether node from runs after node to, directly or
// through others. Each node's ancestors are found once.
func (ix *index) reaches(from, to int) bool {
	set, ok := ix.ancestors[from]
	if !ok {
		set = make([]uint64, (len(ix.graph.names)+63)/64)
		stack := []int{from}
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, d := range ix.graph.deps[i] {
				if set[d/64]&(1<<(d%64)) == 0 {
					set[d/64] |= 1 << (d % 64)
					stack = append(stack, d)
				}
			}
		}
		ix.ancestors[from] = set
	}
	return set[to/64]&(1<<(to%64)) != 0
}
