package loop

import "fmt"

// MaxConfigSize is the largest config Parse accepts, in bytes: 256 KiB.
// The configs people write are a few KiB (the examples are under 2 KiB; 50
// nodes with long instructions and 100 goals fit in well under 100 KiB),
// so this leaves room to spare, while bounding what a hostile file costs:
// at this size the worst configs of BenchmarkParseHostile load in under a
// second and 250 MB on a busy 2-core machine. (At 1 MiB they took 4 s and
// 900 MB: decoding costs grow with size times depth.)
const MaxConfigSize = 256 << 10

// MaxNesting is how deep a value may sit in a config: every segment of a
// table header or dotted key, every inline table and every array around it
// counts one. The deepest value a loop config has is five levels down
// ([providers.claude] tiers = { cheap = ["--model"] }). BurntSushi/toml
// spends time and memory quadratic in the depth (24 KB of nested inline
// tables took seconds and gigabytes), so the depth is bounded before any
// decoding.
const MaxNesting = 32

// checkLimits reports a config that is too large or nests too deep, before
// anything parses it. It makes one linear pass that understands strings and
// comments, and it never fails on bad TOML: what it cannot read, the
// decoder reports.
func checkLimits(file string, src []byte) *Diagnostic {
	if len(src) > MaxConfigSize {
		return &Diagnostic{Pos: Position{File: file, Line: 1, Col: 1}, Message: fmt.Sprintf(
			"the config is %d bytes; a loop config may be at most %d bytes (256 KiB)", len(src), MaxConfigSize)}
	}
	if line, col, ok := nestingWithin(src, MaxNesting); !ok {
		return &Diagnostic{Pos: Position{File: file, Line: line, Col: col}, Message: fmt.Sprintf(
			"this value is nested more than %d levels deep (each table header or dotted key segment, inline table and array counts one); a loop config never needs that many",
			MaxNesting)}
	}
	return nil
}

// nestingWithin reports whether every value of src is at most max levels
// deep and, when one is not, where it starts.
func nestingWithin(src []byte, max int) (line, col int, ok bool) {
	d := &depthScanner{keyScanner: newKeyScanner(src), max: max}
	return d.scan()
}

// depthScanner measures how deep values nest, reading the document the way
// keyScanner does. It stops at the first place deeper than its maximum, so
// its recursion is bounded too.
type depthScanner struct {
	*keyScanner
	max       int  // the deepest a value may be
	header    int  // depth of the table the last [header] selected
	failed    bool // a value went deeper than max
	line, col int  // where it did
}

// scan returns whether every value is within MaxNesting and, when one is
// not, where it starts.
func (d *depthScanner) scan() (line, col int, ok bool) {
	for d.pos < len(d.src) && !d.failed {
		start := d.pos
		d.skipBlank()
		if d.peek() == '[' {
			d.tableHeader()
		} else {
			d.keyValueDepth(d.header)
		}
		d.skipLine() // only a comment may follow
		d.unstick(start)
	}
	return d.line, d.col, !d.failed
}

// place is where a value starts, for the report.
type place struct{ line, col int }

func (d *depthScanner) here() place {
	return place{d.keyScanner.line, d.pos - d.lineStart + 1}
}

// within reports whether depth is within the maximum, and records at as the
// place where the limit was passed when it is not.
func (d *depthScanner) within(depth int, at place) bool {
	if depth <= d.max {
		return true
	}
	if !d.failed {
		d.failed, d.line, d.col = true, at.line, at.col
	}
	return false
}

// tableHeader reads [a.b] or [[a.b]]: its keys sit one level per segment.
func (d *depthScanner) tableHeader() {
	at := d.here()
	d.advance()
	if d.peek() == '[' {
		d.advance()
	}
	if n := d.keyParts(); d.within(n, at) {
		d.header = n
	}
}

// keyValueDepth reads `a.b = value` in a table whose keys sit at base.
func (d *depthScanner) keyValueDepth(base int) {
	at := d.here()
	depth := base + d.keyParts()
	if !d.within(depth, at) || d.peek() != '=' {
		return
	}
	d.advance()
	d.skipSpace()
	d.valueDepth(depth)
}

// keyParts reads a dotted key up to whatever ends it and counts its
// segments: one more than its dots outside quotes. Any byte may be part of
// a key here; the decoder judges which are allowed.
func (d *depthScanner) keyParts() int {
	n := 1
	for d.pos < len(d.src) {
		switch c := d.peek(); c {
		case '=', ']', '}', ',', '[', '{', '#', '\n':
			return n
		case '"', '\'':
			d.quoted(c)
		case '.':
			n++
			d.advance()
		default:
			d.advance()
		}
	}
	return n
}

// valueDepth skips a value whose depth is depth, measuring what nests in it.
func (d *depthScanner) valueDepth(depth int) {
	switch c := d.peek(); c {
	case '[':
		d.arrayDepth(depth)
	case '{':
		d.inlineTableDepth(depth)
	case '"', '\'':
		d.skipString()
	default:
		d.skipAtom()
	}
}

// arrayDepth reads an array whose elements sit one level below it.
func (d *depthScanner) arrayDepth(depth int) {
	if !d.within(depth+1, d.here()) {
		return
	}
	d.items(']', func() { d.valueDepth(depth + 1) })
}

// inlineTableDepth reads { k = v, ... }: its keys sit at the table's depth
// plus their segments, as in a table header.
func (d *depthScanner) inlineTableDepth(depth int) {
	d.items('}', func() { d.keyValueDepth(depth) })
}

// items reads the comma-separated items of an array or inline table, from
// its opening bracket to close, each with item. Blank lines and comments
// may sit between items (in an inline table: TOML 1.1, accepted by toml
// v1.6).
func (d *depthScanner) items(close byte, item func()) {
	d.advance()
	for d.pos < len(d.src) && !d.failed {
		d.skipBlank()
		switch d.peek() {
		case close:
			d.advance()
			return
		case ',':
			d.advance()
		default:
			start := d.pos
			item()
			d.unstick(start)
		}
	}
}

// skipAtom skips a number, boolean or date-time up to the next delimiter.
// Unlike keyScanner.skipScalar it stops at brackets and quotes as well, so
// that nothing nested hides inside a malformed value.
func (d *depthScanner) skipAtom() {
	for d.pos < len(d.src) {
		switch d.peek() {
		case ',', ']', '}', '[', '{', '"', '\'', '#', '\n':
			return
		}
		d.advance()
	}
}
