package loop

import (
	"bytes"
	"strconv"

	"github.com/BurntSushi/toml"
)

// keyPos is where one key is defined.
type keyPos struct {
	Path string // indexed path, e.g. `goal[1].check[0].type`, `providers.claude.tiers.cheap`, `node[0].after`
	Key  string // index-free key exactly as toml.Key{...}.String() renders it, e.g. `goal.check.type`
	Line int    // 1-based line of the key's first byte
	Col  int    // 1-based BYTE column of the key's first byte (same convention as toml.ParseError.Position.Col)
}

// maxKeyNesting bounds the recursion into nested arrays and inline tables.
// Deeper values are skipped without reporting the keys inside them.
const maxKeyNesting = 256

// scanKeys returns every key defined in src, in document order.
//
// It is meant for documents that toml.Decode accepted; on anything else it
// still terminates without panicking, but the result is best effort.
//
// What is reported, and where:
//   - [a.b] and [[a.b]] headers: the full path (an array-of-tables header
//     gets the element index, e.g. goal[1].check[0]), at the first segment.
//   - k = v and a.b.c = v: the full path at the last segment, plus each
//     dotted parent (a, a.b) at its own segment the first time that path is
//     seen; the same inside inline tables.
//   - inline tables inside arrays: their keys, with the element index in
//     the path (check[1].type, m[0][0].a).
//
// Like toml.ParseError, lines count '\n' only and columns are byte offsets
// within the line, measured after a leading byte-order mark.
func scanKeys(src []byte) []keyPos {
	s := newKeyScanner(src)
	s.document()
	return s.out
}

// keyScanner walks a TOML document once, front to back.
type keyScanner struct {
	src       []byte
	pos       int // offset of the next unread byte
	line      int // 1-based line of pos
	lineStart int // offset where columns of the current line start

	out    []keyPos
	seen   map[string]bool // indexed paths reported so far
	arrays map[string]int  // [[header]] path, without index -> elements so far
	table  keyNode         // table selected by the last header
}

// keyNode is a location in the document: its indexed path and its key.
type keyNode struct {
	path string
	key  toml.Key
}

// keySegment is one part of a dotted key, unquoted, with its position.
type keySegment struct {
	name      string
	line, col int
}

func newKeyScanner(src []byte) *keyScanner {
	s := &keyScanner{src: src, line: 1, seen: map[string]bool{}, arrays: map[string]int{}}
	// toml.Decode drops a byte-order mark before lexing, so its columns
	// on line 1 do not count it; neither do ours.
	for _, bom := range []string{"\xef\xbb\xbf", "\xff\xfe", "\xfe\xff"} {
		if bytes.HasPrefix(src, []byte(bom)) {
			s.pos, s.lineStart = len(bom), len(bom)
			break
		}
	}
	return s
}

func (n keyNode) child(name string) keyNode {
	key := append(n.key[:len(n.key):len(n.key)], name) // always a copy
	path := toml.Key{name}.String()
	if len(n.key) > 0 {
		path = n.path + "." + path
	}
	return keyNode{path: path, key: key}
}

func (n keyNode) index(i int) keyNode {
	return keyNode{path: n.path + "[" + strconv.Itoa(i) + "]", key: n.key}
}

// document handles one top-level item (header or key/value) per line.
func (s *keyScanner) document() {
	for s.pos < len(s.src) {
		start := s.pos
		s.skipBlank()
		if s.peek() == '[' {
			s.header()
		} else {
			s.keyValue(s.table, 0)
		}
		s.skipLine() // only a comment may follow; resyncs on junk
		s.unstick(start)
	}
}

// header reads [a.b] or [[a.b]] and makes it the current table.
func (s *keyScanner) header() {
	s.advance()
	array := s.peek() == '['
	if array {
		s.advance()
	}
	segs := s.keySegments()
	if len(segs) == 0 {
		return
	}
	s.table = s.resolve(segs, array)
	s.emit(s.table, segs[0])
}

// resolve turns a header into a path. A segment naming an array of tables
// means its last element; the last segment of [[...]] adds an element.
func (s *keyScanner) resolve(segs []keySegment, array bool) keyNode {
	var n keyNode
	for i, sg := range segs {
		n = n.child(sg.name)
		count, ok := s.arrays[n.path]
		switch {
		case array && i == len(segs)-1:
			s.arrays[n.path] = count + 1
			n = n.index(count)
		case ok:
			n = n.index(count - 1)
		}
	}
	return n
}

// keyValue reads `key = value` relative to base.
func (s *keyScanner) keyValue(base keyNode, depth int) {
	segs := s.keySegments()
	if len(segs) == 0 {
		return
	}
	n := base
	for i, sg := range segs {
		n = n.child(sg.name)
		if i == len(segs)-1 || !s.seen[n.path] {
			s.emit(n, sg)
		}
	}
	s.skipSpace()
	if s.peek() != '=' {
		return
	}
	s.advance()
	s.skipSpace()
	s.value(n, depth)
}

func (s *keyScanner) emit(n keyNode, sg keySegment) {
	s.seen[n.path] = true
	s.out = append(s.out, keyPos{Path: n.path, Key: n.key.String(), Line: sg.line, Col: sg.col})
}

// keySegments reads a dotted key such as `a . "b.c".'d'`.
func (s *keyScanner) keySegments() []keySegment {
	var segs []keySegment
	for {
		s.skipSpace()
		sg, ok := s.segment()
		if !ok {
			return segs
		}
		segs = append(segs, sg)
		s.skipSpace()
		if s.peek() != '.' {
			return segs
		}
		s.advance()
	}
}

// segment reads one bare, "basic" or 'literal' key part.
func (s *keyScanner) segment() (keySegment, bool) {
	sg := keySegment{line: s.line, col: s.pos - s.lineStart + 1}
	switch c := s.peek(); {
	case c == '"':
		sg.name = unescapeKey(s.quoted('"'))
	case c == '\'':
		sg.name = s.quoted('\'')
	case isBareKeyByte(c):
		start := s.pos
		for isBareKeyByte(s.peek()) {
			s.advance()
		}
		sg.name = string(s.src[start:s.pos])
	default:
		return sg, false
	}
	return sg, true
}

// value skips one value, reporting the keys of inline tables inside it.
func (s *keyScanner) value(n keyNode, depth int) {
	switch c := s.peek(); {
	case (c == '{' || c == '[') && depth >= maxKeyNesting:
		s.skipNested()
	case c == '{':
		s.inlineTable(n, depth+1)
	case c == '[':
		s.array(n, depth+1)
	case c == '"' || c == '\'':
		s.skipString()
	default:
		s.skipScalar()
	}
}

func (s *keyScanner) inlineTable(n keyNode, depth int) {
	s.items('}', func(int) { s.keyValue(n, depth) })
}

func (s *keyScanner) array(n keyNode, depth int) {
	s.items(']', func(i int) { s.value(n.index(i), depth) })
}

// items reads the comma-separated items of an inline table or an array,
// from its opening bracket to end, calling item with each one's index.
// Newlines and comments may come between them (in an inline table: TOML
// 1.1, accepted by toml v1.6).
func (s *keyScanner) items(end byte, item func(i int)) {
	s.advance()
	for i := 0; s.pos < len(s.src); {
		s.skipBlank()
		switch s.peek() {
		case end:
			s.advance()
			return
		case ',':
			s.advance()
		default:
			start := s.pos
			item(i)
			s.unstick(start)
			i++
		}
	}
}
