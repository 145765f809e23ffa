package delivery

// maxEdits bounds the edit distance the line diff searches: beyond it,
// what lies between the common head and tail is shown replaced whole
// (still an exact patch, only a longer one), so that the diff of two
// unrelated large files costs bounded time and memory.
const maxEdits = 1024

// diffLines returns the blocks of changed lines that turn x into y: a
// shortest edit script (Myers), after the common head and tail.
func diffLines(x, y []string) []block {
	ids := map[string]int{}
	id := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			n, ok := ids[l]
			if !ok {
				n = len(ids)
				ids[l] = n
			}
			out[i] = n
		}
		return out
	}
	a, b := id(x), id(y)
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	a, b = a[head:len(a)-tail], b[head:len(b)-tail]
	same := myers(a, b)
	if same == nil { // too far apart: replace the middle whole
		return []block{{head, len(a), head, len(b)}}
	}
	return blocks(same, len(a), len(b), head)
}

// myers returns, for each position of a, the position of b it is kept
// at, or -1 where it is deleted: a shortest edit script turning a into b.
// It returns nil when more than maxEdits edits are needed.
func myers(a, b []int) []int {
	n, m := len(a), len(b)
	off := min(n+m, maxEdits) + 1 // no diagonal beyond maxEdits is visited
	v := make([]int, 2*off+1)
	var trace [][]int // before step d: v for k in [-(d-1), d-1]
	for d := 0; d <= min(n+m, maxEdits); d++ {
		trace = append(trace, append([]int(nil), v[off-d+1:max(off+d, off-d+1)]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // from k+1: a line of b inserted
			} else {
				x = v[off+k-1] + 1 // from k-1: a line of a deleted
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m)
			}
		}
	}
	return nil
}

// backtrack walks the trace back from (n, m) to (0, 0), recording the
// lines kept on the way.
func backtrack(trace [][]int, n, m int) []int {
	kept := make([]int, n)
	for i := range kept {
		kept[i] = -1
	}
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		at := func(k int) int { return trace[d][k+d-1] }
		k := x - y
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			kept[x] = y
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		kept[x] = y
	}
	return kept
}

// blocks turns kept positions into blocks of changed lines, offset by head.
func blocks(kept []int, n, m, head int) []block {
	var out []block
	i, j := 0, 0
	for i < n || j < m {
		if i < n && kept[i] == j {
			i, j = i+1, j+1
			continue
		}
		bl := block{i1: head + i, i2: head + j}
		for i < n && kept[i] < 0 {
			i, bl.n1 = i+1, bl.n1+1
		}
		next := m
		if i < n {
			next = kept[i]
		}
		bl.n2, j = next-j, next
		out = append(out, bl)
	}
	return out
}
