package loop

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
// Within a layer, items keep config order. It takes time linear in the
// items and dependencies (Kahn's algorithm).
func (g graph) layers() [][]int {
	waiting := make([]int, len(g.names)) // dependencies not placed yet
	next := make([][]int, len(g.names))  // the items that depend on each
	var ready []int
	for i, deps := range g.deps {
		waiting[i] = len(deps)
		for _, d := range deps {
			next[d] = append(next[d], i)
		}
		if len(deps) == 0 {
			ready = append(ready, i)
		}
	}
	level := make([]int, len(g.names))
	for i := range level {
		level[i] = -1
	}
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		level[i] = g.levelAfter(i, level)
		for _, j := range next[i] {
			if waiting[j]--; waiting[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	return byLevel(level)
}

// levelAfter is the layer of i, whose dependencies are all placed.
func (g graph) levelAfter(i int, level []int) int {
	l := 0
	for _, d := range g.deps[i] {
		l = max(l, level[d]+1)
	}
	return l
}

// byLevel groups the placed items (level >= 0) by level, in index order.
func byLevel(level []int) [][]int {
	var out [][]int
	for i, l := range level {
		if l < 0 {
			continue
		}
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], i)
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
