package delivery

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// contextLines is how many unchanged lines surround a change in a hunk, as in
// `git diff`; changes closer than twice that share a hunk.
const contextLines = 3

// block is a run of changed lines: n1 lines of the old file at i1 become
// n2 lines of the new file at i2 (0-based).
type block struct{ i1, n1, i2, n2 int }

// writeHunks writes the hunks that turn old into new.
func writeHunks(b *bytes.Buffer, old, new []byte) {
	x, y := slices.Collect(strings.Lines(string(old))), slices.Collect(strings.Lines(string(new)))
	blocks := diffLines(x, y)
	fn, limit := "", -1
	for len(blocks) > 0 {
		n := 1
		for n < len(blocks) && blocks[n].i1-(blocks[n-1].i1+blocks[n-1].n1) <= 2*contextLines {
			n++
		}
		first, last := blocks[0], blocks[n-1]
		s1 := max(first.i1-contextLines, 0)
		e1 := min(last.i1+last.n1+contextLines, len(x))
		s2 := first.i2 - (first.i1 - s1)
		e2 := last.i2 + last.n2 + (e1 - last.i1 - last.n1)
		if f, ok := funcLine(x, s1-1, limit); ok {
			fn = f
		}
		limit = s1 - 1
		fmt.Fprintf(b, "@@ -%s +%s @@", hunkRange(s1, e1-s1), hunkRange(s2, e2-s2))
		if fn != "" {
			b.WriteString(" " + fn)
		}
		b.WriteString("\n")
		writeBody(b, x, y, blocks[:n], s1, e1)
		blocks = blocks[n:]
	}
}

// writeBody writes the lines of one hunk: old lines s1 to e1, with the
// blocks' changes.
func writeBody(b *bytes.Buffer, x, y []string, blocks []block, s1, e1 int) {
	i := s1
	for _, bl := range blocks {
		for ; i < bl.i1; i++ {
			writeLine(b, ' ', x[i])
		}
		for j := bl.i1; j < bl.i1+bl.n1; j++ {
			writeLine(b, '-', x[j])
		}
		for j := bl.i2; j < bl.i2+bl.n2; j++ {
			writeLine(b, '+', y[j])
		}
		i = bl.i1 + bl.n1
	}
	for ; i < e1; i++ {
		writeLine(b, ' ', x[i])
	}
}

func writeLine(b *bytes.Buffer, mark byte, line string) {
	b.WriteByte(mark)
	b.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}

// hunkRange is one side of a hunk header: "start,count", the start
// 1-based, the count left out when it is 1, and the start the line
// before when it is 0.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// funcLine finds the hunk header's function line as git does without a
// diff driver: the nearest old line before the hunk (searching from
// start down to, not including, limit) that begins with a letter, '_'
// or '$', cut to 80 bytes with trailing white space removed.
func funcLine(x []string, start, limit int) (string, bool) {
	for l := start; l > limit && l >= 0; l-- {
		line := x[l]
		if line == "" || !(isAlpha(line[0]) || line[0] == '_' || line[0] == '$') {
			continue
		}
		return strings.TrimRight(line[:min(len(line), 80)], " \t\n\v\f\r"), true
	}
	return "", false
}

func isAlpha(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
