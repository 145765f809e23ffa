// Package phrase owns the wording that loop-action's messages share: a
// count with its noun, an id cut to its short form, text made one
// bounded line, a size in bytes, a duration, a markdown code span and a code block's fence. Evidence lines (package gate), log lines (ledger), run
// notes (runner), the export, the state branch's errors and the pull
// request comments (action) all word these the same way through it.
//
// It is a leaf: it imports nothing of loop-action's, so that the gate,
// which must import no I/O, and the ledger can both use it. It formats
// strings and nothing else: it never reads, writes or decides anything.
package phrase

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Plural renders a count with its noun: "1 entry", "2 entries", "0 entries".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Short is the short form of a snapshot or commit id: its first 7
// characters, as git abbreviates, or all of id when it is shorter.
func Short(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}

// OneLine makes s one line of valid UTF-8: every run of white space,
// newlines included, becomes one space, and invalid bytes become U+FFFD.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
}

// Line is OneLine(s) cut to at most n runes (n ≥ 1), the cut marked "…".
func Line(s string, n int) string {
	s = OneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Bytes renders a size in bytes with binary units, exactly when it is a
// whole number of its unit and to one decimal otherwise: "512 B",
// "100 MiB", "1.5 GiB", "1 TiB".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u, div := 0, int64(1)
	for u+1 < len(units) && n/div >= 1<<10 {
		u, div = u+1, div<<10
	}
	if n%div == 0 {
		return strconv.FormatInt(n/div, 10) + " " + units[u]
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + units[u]
}

// Duration renders how long something took: to a tenth of a second under
// a minute ("4.2s"), to the second from a minute on ("2m5s").
func Duration(d time.Duration) string {
	if d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// Fence is the backtick fence of a markdown code block holding s: longer
// than any run of backticks in s, and at least three.
func Fence(s string) string {
	longest, n := 0, 0
	for i := range len(s) {
		n++
		if s[i] != '`' {
			n = 0
		}
		longest = max(longest, n)
	}
	return strings.Repeat("`", max(3, longest+1))
}

// Code renders s, one line, as a markdown inline code span that shows it
// as the characters it is made of: the backtick fence is longer than any
// run of backticks in s, and s is padded with a space at each end when it
// is empty or starts or ends with a backtick or a space (CommonMark takes
// one space off each end).
func Code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if s == "" || strings.ContainsAny(s[:1]+s[len(s)-1:], "` ") {
		s = " " + s + " "
	}
	return fence + s + fence
}
