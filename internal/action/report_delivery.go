package action

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// delivery says where the run's work went.
func (r Report) delivery(b *strings.Builder) {
	if len(r.Delivery) == 0 {
		return
	}
	b.WriteString("### Delivery\n\n" + strings.Join(r.Delivery, "\n\n") + "\n\n")
}

// diffReserve is what the diff section leaves of a report's room for the
// rest (and for the note that it was cut).
const diffReserve = 600

// diff shows the certified change, collapsed and fenced so that nothing
// in it renders (a fence longer than any run of backticks inside), in at
// most room characters: a longer diff is cut on a line and points at the
// artifact or the run, and the command that applies it follows.
func (r Report) diff(b *strings.Builder, room int) {
	if r.Diff == "" {
		return
	}
	room -= diffReserve + utf8.RuneCountInString(r.Apply)
	patch, cut := cutLines(strings.ToValidUTF8(r.Diff, "\uFFFD"), room)
	fence := strings.Repeat("`", max(3, longestRun(patch, '`')+1))
	b.WriteString("<details><summary>The certified change</summary>\n\n")
	if patch != "" {
		fmt.Fprintf(b, "%sdiff\n%s\n%s\n\n", fence, strings.TrimSuffix(patch, "\n"), fence)
	}
	if cut {
		where := "the job summary of [this run](" + r.SummaryURL + ")"
		if r.ArtifactURL != "" {
			where = "the success export's [artifact](" + r.ArtifactURL + ")"
		} else if r.SummaryURL == "" {
			where = "the job summary"
		}
		fmt.Fprintf(b, "…cut to fit: the whole change is in %s.\n\n", where)
	}
	b.WriteString("</details>\n\n")
	if r.Apply != "" {
		fmt.Fprintf(b, "Apply it to a clone of this repository with\n\n```sh\n%s\n```\n\n", r.Apply)
	}
}

// cutLines cuts s to at most n characters, on a line boundary.
func cutLines(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	cut := string([]rune(s)[:n])
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i+1]
	}
	return cut, true
}

// longestRun is the longest run of ch in s.
func longestRun(s string, ch byte) int {
	longest, n := 0, 0
	for i := range len(s) {
		n++
		if s[i] != ch {
			n = 0
		}
		longest = max(longest, n)
	}
	return longest
}
