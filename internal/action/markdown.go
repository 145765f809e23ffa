package action

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/loop-action/loop-action/internal/phrase"
)

// commandLine finds the command's line: the first line that people
// reading the comment see as a line of its own, outside code, quotes and
// HTML. goldmark reads the blocks and inlines as CommonMark does; on top
// of it, what a browser makes of the raw HTML GitHub passes through: an
// HTML comment an HTML block leaves open hides everything after it up to a
// raw "-->", and so does an open <details>, collapsed until clicked. Where
// it cannot tell, it errs towards "not visible": a missed command can be
// written again, a hidden one must never act.
func commandLine(body string) (string, bool) {
	src := []byte(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(body)) // CommonMark's line endings
	var h rawHTML
	quotes := 0
	line, found := "", false
	_ = ast.Walk(goldmark.DefaultParser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n := n.(type) {
		case *ast.Blockquote: // walked for its HTML, which can open a comment past its end
			if entering {
				quotes++
			} else {
				quotes--
			}
		case *ast.CodeBlock, *ast.FencedCodeBlock, *ast.CodeSpan:
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock:
			if entering {
				h.segments(src, n.Lines())
				if n.HasClosure() {
					h.scan(string(n.ClosureLine.Value(src)))
				}
			}
		case *ast.RawHTML:
			if entering {
				h.segments(src, n.Segments)
			}
		case *ast.Text:
			if entering && quotes == 0 && !h.comment && h.details == 0 {
				line, found = startsLine(src, n.Segment.Start)
			}
		}
		if found {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return line, found
}

// startsLine is the line of src from start, trimmed, when text at start
// begins its line and the line is a /loop command. A paragraph's line
// indented four columns or more is skipped: it looks like indented code.
func startsLine(src []byte, start int) (string, bool) {
	begin := bytes.LastIndexByte(src[:start], '\n') + 1
	if col, rest := indent(string(src[begin:start]), 0); rest != "" || col >= 4 {
		return "", false
	}
	end := bytes.IndexByte(src[start:], '\n')
	if end < 0 {
		end = len(src) - start
	}
	t := strings.TrimSpace(string(src[start : start+end]))
	if t == "/loop" || strings.HasPrefix(t, "/loop ") || strings.HasPrefix(t, "/loop\t") {
		return t, true
	}
	return "", false
}

// rawHTML follows the HTML GitHub passes through raw, in document order:
// whether an HTML comment is open, and how many <details> elements are.
type rawHTML struct {
	comment bool // inside an HTML comment (<!-- without its -->)
	details int  // <details> elements open
}

func (h *rawHTML) segments(src []byte, s *text.Segments) {
	for _, seg := range s.Sliced(0, s.Len()) {
		h.scan(string(seg.Value(src)))
	}
}

// scan follows HTML comments and <details> elements through raw HTML.
func (h *rawHTML) scan(line string) {
	lower := strings.ToLower(line)
	for lower != "" {
		if h.comment {
			i := strings.Index(lower, "-->")
			if i < 0 {
				return
			}
			h.comment, lower = false, lower[i+3:]
			continue
		}
		i := strings.Index(lower, "<!--")
		h.details += tags(lower, i, "<details") - tags(lower, i, "</details")
		h.details = max(h.details, 0)
		if i < 0 {
			return
		}
		h.comment, lower = true, lower[i+4:]
	}
}

// tags counts the tags named open in s[:end] (all of s when end < 0).
func tags(s string, end int, open string) int {
	if end >= 0 {
		s = s[:end]
	}
	n := 0
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return n
		}
		s = s[i+len(open):]
		if s == "" || strings.ContainsRune(" \t>/", rune(s[0])) {
			n++
		}
	}
}

// indent measures the spaces and tabs that start s (a tab goes to the next
// multiple of 4, counting from column from) and returns the column after
// them and the rest of s. A line of only whitespace has rest "".
func indent(s string, from int) (int, string) {
	col := from
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col, s[i:]
		}
	}
	return col, ""
}

// maxEcho bounds the characters of comment text echoed in a reply.
const maxEcho = 60

// Verbatim renders text taken from a comment so that nothing in it renders
// when the bot echoes it: an inline code span whose backtick fence is
// longer than any run of backticks inside, with line breaks made spaces and
// the text cut to maxEcho characters. A mention, an image, a link or HTML
// inside it shows as the characters they are made of.
func Verbatim(s string) string { return codeSpan(s, maxEcho) }

// maxErr bounds the characters of an error message shown in a report.
const maxErr = 240

// ErrSpan renders an error message as Verbatim does, cut to its last
// maxErr characters: a wrapped error names its cause last, and the cause
// is what a reader needs (a refused token, a missing permission).
func ErrSpan(s string) string {
	if r := []rune(s); len(r) > maxErr {
		s = "…" + string(r[len(r)-maxErr+1:])
	}
	return codeSpan(s, maxErr)
}

// codeSpan is Verbatim with the text cut to limit characters: the form of
// everything an agent, a check or a commenter wrote that reaches a comment
// or the job summary.
func codeSpan(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit-1]) + "…"
	}
	return phrase.Code(s)
}

// verbatimAll renders names with Verbatim, separated by commas.
func verbatimAll(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Verbatim(n)
	}
	return strings.Join(out, ", ")
}
