package export

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/phrase"
)

// yamlString quotes s as a YAML double-quoted scalar. Go's escapes (\",
// \\, \n, \t, \xXX, \uXXXX, \UXXXXXXXX…) are all valid YAML escapes.
func yamlString(s string) string {
	return strconv.Quote(strings.ToValidUTF8(s, "\uFFFD"))
}

// code renders s, made one line, as a markdown code span, whatever
// backticks it holds.
func code(s string) string { return phrase.Code(phrase.OneLine(s)) }

// quoteBlock renders text as a markdown block quote, line for line, so that
// its own headings and lists stay inside it.
func quoteBlock(text string) string {
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var b strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			b.WriteString(">\n")
		} else {
			b.WriteString("> " + line + "\n")
		}
	}
	return b.String()
}

// listItem renders a markdown list item holding text verbatim; lines after
// the first are indented to stay in the item.
func listItem(text string) string {
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	return "- " + strings.ReplaceAll(text, "\n", "\n  ") + "\n"
}

// count renders n with thousands separators: 1,234,567.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// dollars renders a cost in US dollars.
func dollars(usd float64) string {
	if usd > 0 && usd < 0.005 {
		return "< $0.01"
	}
	return fmt.Sprintf("$%.2f", usd)
}

// clock renders a wall-clock duration to the second.
func clock(d time.Duration) string { return d.Round(time.Second).String() }

// number renders a config number as written: 80, 0.5, 1e+06.
func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// orUnknown renders a value in a code span, or "unknown" when it is empty.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return code(s)
}
