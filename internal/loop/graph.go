package loop

import "slices"

// graph is a dependency graph over items named in config order: deps[i]
// holds the indexes item i must come after. Unknown names are left out
// (Validate reports them).
type graph struct {
	names []string
	deps  [][]int
}

func newGraph(list []string, after func(i int) []string) graph {
	ns := newNames(list)
	g := graph{names: list, deps: make([][]int, len(list))}
	for i := range list {
		for _, a := range after(i) {
			if j := ns.index(a); j >= 0 && j != i { // self-references are reported apart
				g.deps[i] = append(g.deps[i], j)
			}
		}
	}
	return g
}

func nodeGraph(nodes []Node) graph {
	return newGraph(namesOf(nodes), func(i int) []string { return nodes[i].After })
}

func stageGraph(stages []Stage) graph {
	return newGraph(namesOf(stages), func(i int) []string { return stages[i].After })
}

// layers returns the items in layers: an item is in the layer after the
// latest of its dependencies. Items on or behind a cycle are left out.
// Within a layer, items keep config order. Kahn's algorithm, a layer per
// round: time linear in the items and dependencies, besides the sorts.
func (g graph) layers() [][]int {
	waiting := make([]int, len(g.names)) // dependencies not placed yet
	next := make([][]int, len(g.names))  // the items that depend on each
	var layer []int
	for i, deps := range g.deps {
		waiting[i] = len(deps)
		for _, d := range deps {
			next[d] = append(next[d], i)
		}
		if len(deps) == 0 {
			layer = append(layer, i)
		}
	}
	var out [][]int
	for len(layer) > 0 {
		slices.Sort(layer)
		out = append(out, layer)
		var ready []int
		for _, i := range layer {
			for _, j := range next[i] {
				if waiting[j]--; waiting[j] == 0 {
					ready = append(ready, j)
				}
			}
		}
		layer = ready
	}
	return out
}

// cycles returns each distinct cycle once, as the indexes along it starting
// from its earliest item in config order.
func (g graph) cycles() [][]int {
	const (
		unvisited = iota
		active
		done
	)
	state := make([]int, len(g.names))
	seen := map[int]bool{}
	var out [][]int
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = active
		stack = append(stack, i)
		for _, d := range g.deps[i] {
			switch state[d] {
			case unvisited:
				visit(d)
			case active:
				if c := cycleFrom(stack, d); !seen[c[0]] {
					seen[c[0]] = true
					out = append(out, c)
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
	}
	for i := range g.names {
		if state[i] == unvisited {
			visit(i)
		}
	}
	return out
}

// cycleFrom cuts the cycle that starts at d out of the DFS stack and
// rotates it to start at its smallest index.
func cycleFrom(stack []int, d int) []int {
	start := 0
	for k, v := range stack {
		if v == d {
			start = k
		}
	}
	c := append([]int(nil), stack[start:]...)
	low := 0
	for k, v := range c {
		if v < c[low] {
			low = k
		}
	}
	return append(c[low:], c[:low]...)
}
