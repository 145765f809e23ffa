package action

import (
	"strings"
	"unicode/utf8"
)

// blocks follows a comment's Markdown line by line, as far as it matters for
// finding a command people can see: CommonMark's fenced and indented code,
// block quotes (and their lazy continuation lines), HTML blocks, and, as
// GitHub renders them, HTML comments and collapsed <details>. Where it
// cannot tell, it errs towards "not visible": a missed command can be
// written again, a hidden one must never act.
type blocks struct {
	fence    byte              // '`' or '~' while inside a fenced code block
	fenceLen int               // the opening fence's length
	fenceCol int               // the content column of the container it opened in
	html     func(string) bool // inside an HTML block: whether a line ends it
	comment  bool              // inside an HTML comment (<!-- without its -->)
	details  int               // <details> elements open
	quoted   bool              // the last line was quoted: a paragraph may go on lazily
}

// skip takes the next line and reports whether it cannot hold a command.
func (b *blocks) skip(line string) bool {
	col, rest := indent(line, 0)
	blank := rest == ""
	switch {
	case b.fence != 0:
		return b.inFence(line, col, rest, blank)
	case b.html != nil:
		if b.html(line) {
			b.html = nil
		}
		b.scan(line)
		return true
	case b.comment:
		b.scan(line)
		return true
	case blank:
		b.quoted = false
		return true
	case col >= 4: // indented code, or a paragraph's continuation
		b.scan(line)
		return true
	case b.openFence(col, rest):
		return true
	}
	if end := htmlBlock(rest); end != nil {
		if !end(line) {
			b.html = end
		}
		b.scan(line)
		return true
	}
	hidden := b.quoted || b.comment || b.details > 0
	b.scan(line)
	return hidden || b.quoted
}

// inFence handles a line inside a fenced code block: a closing fence ends
// it, and so does a line indented less than the container the fence is in
// (that container, a list item, has ended); that line is then read afresh.
func (b *blocks) inFence(line string, col int, rest string, blank bool) bool {
	switch {
	case blank:
	case col < b.fenceCol:
		b.fence = 0
		return b.skip(line)
	case col-b.fenceCol <= 3 && closes(rest, b.fence, b.fenceLen):
		b.fence = 0
	}
	return true
}

// openFence opens a fenced code block when rest, indented col columns,
// starts one at the top level or inside list items (- * + 1. 1)). A quote
// marker it meets makes the line quoted.
func (b *blocks) openFence(col int, rest string) bool {
	base := 0
	for range 16 {
		if col-base <= 3 {
			if ch, n, ok := fenceOpen(rest); ok {
				b.fence, b.fenceLen, b.fenceCol, b.quoted = ch, n, base, false
				return true
			}
			if rest[0] == '>' {
				b.quoted = true
				return false
			}
		}
		w := listMarker(rest)
		if w == 0 {
			return false
		}
		c, r := indent(rest[w:], col+w)
		if r == "" || c-(col+w) > 4 {
			return false // an empty item, or one starting with indented code
		}
		base, col, rest = c, c, r
	}
	return false
}

// scan follows HTML comments and <details> elements through a line.
func (b *blocks) scan(line string) {
	lower := strings.ToLower(line)
	for lower != "" {
		if b.comment {
			i := strings.Index(lower, "-->")
			if i < 0 {
				return
			}
			b.comment, lower = false, lower[i+3:]
			continue
		}
		i := strings.Index(lower, "<!--")
		b.details += tags(lower, i, "<details") - tags(lower, i, "</details")
		b.details = max(b.details, 0)
		if i < 0 {
			return
		}
		b.comment, lower = true, lower[i+4:]
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

// fenceOpen reports whether s opens a fenced code block: three or more
// backticks or tildes; a backtick fence's info string has no backtick.
func fenceOpen(s string) (byte, int, bool) {
	if s[0] != '`' && s[0] != '~' {
		return 0, 0, false
	}
	n := run(s, s[0])
	if n < 3 || (s[0] == '`' && strings.IndexByte(s[n:], '`') >= 0) {
		return 0, 0, false
	}
	return s[0], n, true
}

// closes reports whether s closes a fence of n ch: at least n of them and
// nothing after but spaces and tabs.
func closes(s string, ch byte, n int) bool {
	k := run(s, ch)
	return k >= n && strings.Trim(s[k:], " \t") == ""
}

func run(s string, ch byte) int {
	n := 0
	for n < len(s) && s[n] == ch {
		n++
	}
	return n
}

// listMarker is the width of the list marker s starts with (-, +, * or up
// to nine digits and . or )), followed by a space, a tab or the line's
// end; 0 when it starts with none.
func listMarker(s string) int {
	w := 0
	switch {
	case s[0] == '-' || s[0] == '+' || s[0] == '*':
		w = 1
	default:
		for w < len(s) && w < 9 && s[w] >= '0' && s[w] <= '9' {
			w++
		}
		if w == 0 || w == len(s) || (s[w] != '.' && s[w] != ')') {
			return 0
		}
		w++
	}
	if w < len(s) && s[w] != ' ' && s[w] != '\t' {
		return 0
	}
	return w
}

// htmlBlock reports whether s (a line without its indentation) starts one
// of CommonMark's HTML blocks, and returns what ends it. Type 7 (any tag
// alone on a line) is taken even where CommonMark would read it as inline
// HTML in a paragraph: skipping is the safe side.
func htmlBlock(s string) func(string) bool {
	lower := strings.ToLower(s)
	if !strings.HasPrefix(lower, "<") {
		return nil
	}
	contains := func(ends ...string) func(string) bool {
		return func(line string) bool {
			l := strings.ToLower(line)
			for _, e := range ends {
				if strings.Contains(l, e) {
					return true
				}
			}
			return false
		}
	}
	blankLine := func(line string) bool { return strings.TrimSpace(line) == "" }
	switch {
	case startsTag(lower[1:], rawTags):
		return contains("</script>", "</pre>", "</style>", "</textarea>")
	case strings.HasPrefix(lower, "<!--"):
		return contains("-->")
	case strings.HasPrefix(lower, "<?"):
		return contains("?>")
	case strings.HasPrefix(lower, "<![cdata["):
		return contains("]]>")
	case len(lower) > 2 && lower[1] == '!' && isLetter(lower[2]):
		return contains(">")
	case startsTag(strings.TrimPrefix(lower[1:], "/"), blockTags):
		return blankLine
	case loneTag(strings.TrimRight(lower, " \t")):
		return blankLine
	}
	return nil
}

var rawTags = []string{"script", "pre", "style", "textarea"}

var blockTags = strings.Fields(`address article aside base basefont blockquote body caption center col
	colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset
	h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol
	optgroup option p param search section summary table tbody td tfoot th thead title tr track ul`)

// startsTag reports whether s starts with one of names followed by the end
// of the line, whitespace, > or />.
func startsTag(s string, names []string) bool {
	for _, n := range names {
		if rest, ok := strings.CutPrefix(s, n); ok && (rest == "" || strings.ContainsRune(" \t>", rune(rest[0])) || strings.HasPrefix(rest, "/>")) {
			return true
		}
	}
	return false
}

// loneTag reports whether s is one open or closing tag and nothing else.
func loneTag(s string) bool {
	name := strings.TrimPrefix(s[1:], "/")
	return len(s) > 2 && strings.HasSuffix(s, ">") && name != "" && isLetter(name[0]) &&
		strings.Count(s, "<") == 1 && strings.Count(s, ">") == 1
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

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
	longest := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			n := run(s[i:], '`')
			longest, i = max(longest, n), i+n-1
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s == "" || strings.ContainsAny(s[:1]+s[len(s)-1:], "` ") {
		s = " " + s + " " // CommonMark takes one space off each end
	}
	return fence + s + fence
}

// verbatimAll renders names with Verbatim, separated by commas.
func verbatimAll(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Verbatim(n)
	}
	return strings.Join(out, ", ")
}
