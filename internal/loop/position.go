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

// scanKeys returns every key defined in src, in document order, unless a
// value is nested deeper than maxDepth (MaxNesting says how depth counts)
// or a key's path is longer than MaxKeyPath: then it stops there and
// returns where that value or key starts.
//
// It is meant for documents that toml.Decode accepts, and it runs before
// the decoder, to bound its cost (limits.go): on anything else it still
// ends in linear time without panicking, and finds every value too deep
// that the decoder would reach. Its bare keys are the decoder's bytes, and
// where it gives up on a line the decoder stops with an error.
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
func scanKeys(src []byte, maxDepth int) (keys []keyPos, stop *scanStop) {
	s := newKeyScanner(src)
	s.maxDepth = maxDepth
	s.document()
	return s.out, s.stop
}

// scanStop is where a key scan stopped, and why.
type scanStop struct {
	keySegment
	long bool // a key's path is longer than MaxKeyPath; else a value is too deep
}

// keyScanner walks a TOML document once, front to back.
type keyScanner struct {
	src       []byte
	pos       int // offset of the next unread byte
	line      int // 1-based line of pos
	lineStart int // offset where columns of the current line start

	out      []keyPos
	seen     map[string]bool // indexed paths reported so far
	arrays   map[string]int  // [[header]] path, without index -> elements so far
	table    keyNode         // table selected by the last header
	maxDepth int
	stop     *scanStop // the first value too deep or key too long
}

// keyNode is a location in the document: its indexed path, its key and its
// depth (a level per key segment and per array around it).
type keyNode struct {
	path  string
	key   toml.Key
	depth int
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
	return keyNode{path: path, key: key, depth: n.depth + 1}
}

// index is element i of n, an array: one level deeper.
func (n keyNode) index(i int) keyNode {
	return keyNode{path: n.path + "[" + strconv.Itoa(i) + "]", key: n.key, depth: n.depth + 1}
}

// within reports whether depth is at most maxDepth; when it is not, it
// records at as the place where the scan stops.
func (s *keyScanner) within(depth int, at keySegment) bool {
	if depth <= s.maxDepth {
		return true
	}
	if s.stop == nil {
		s.stop = &scanStop{keySegment: at}
	}
	return false
}

// short reports whether n's path is at most MaxKeyPath bytes; when it is
// not, it records at as the place where the scan stops.
func (s *keyScanner) short(n keyNode, at keySegment) bool {
	if len(n.path) <= MaxKeyPath {
		return true
	}
	if s.stop == nil {
		s.stop = &scanStop{keySegment: at, long: true}
	}
	return false
}

func (s *keyScanner) here() keySegment {
	return keySegment{line: s.line, col: s.pos - s.lineStart + 1}
}

// document handles one top-level item (header or key/value) per line.
func (s *keyScanner) document() {
	for s.pos < len(s.src) && s.stop == nil {
		start := s.pos
		s.skipBlank()
		if s.peek() == '[' {
			s.header()
		} else {
			s.keyValue(s.table)
		}
		s.skipLine() // only a comment may follow; resyncs on junk
		s.unstick(start)
	}
}

// header reads [a.b] or [[a.b]] and makes it the current table.
func (s *keyScanner) header() {
	at := s.here()
	s.advance()
	array := s.peek() == '['
	if array {
		s.advance()
	}
	segs := s.keySegments()
	if len(segs) == 0 || !s.within(len(segs), at) {
		return
	}
	s.table = s.resolve(segs, array)
	if s.short(s.table, at) {
		s.emit(s.table, segs[0])
	}
}

// resolve turns a header into a path. A segment naming an array of tables
// means its last element; the last segment of [[...]] adds an element.
// The elements of an array of tables are no deeper than the array.
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
		n.depth = i + 1
	}
	return n
}

// keyValue reads `key = value` relative to base.
func (s *keyScanner) keyValue(base keyNode) {
	segs := s.keySegments()
	if len(segs) == 0 || !s.within(base.depth+len(segs), segs[0]) {
		return
	}
	n := base
	for i, sg := range segs {
		n = n.child(sg.name)
		if !s.short(n, segs[0]) {
			return
		}
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
	s.value(n)
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
	sg := s.here()
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
// The keys of an inline table sit one level per segment below it, the
// elements of an array one level below it.
func (s *keyScanner) value(n keyNode) {
	switch c := s.peek(); {
	case c == '{':
		s.items('}', func(int) { s.keyValue(n) })
	case c == '[':
		if s.within(n.depth+1, s.here()) {
			s.items(']', func(i int) { s.value(n.index(i)) })
		}
	case c == '"' || c == '\'':
		s.skipString()
	default:
		s.skipScalar()
	}
}

// items reads the comma-separated items of an inline table or an array,
// from its opening bracket to end, calling item with each one's index.
// Newlines and comments may come between them (in an inline table: TOML
// 1.1, accepted by toml v1.6).
func (s *keyScanner) items(end byte, item func(i int)) {
	s.advance()
	for i := 0; s.pos < len(s.src) && s.stop == nil; {
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
