package loop

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

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
	s.advance()
	for s.pos < len(s.src) {
		s.skipBlank() // newlines and comments: TOML 1.1, accepted by toml v1.6
		switch s.peek() {
		case '}':
			s.advance()
			return
		case ',':
			s.advance()
		default:
			start := s.pos
			s.keyValue(n, depth)
			s.unstick(start)
		}
	}
}

func (s *keyScanner) array(n keyNode, depth int) {
	s.advance()
	for i := 0; s.pos < len(s.src); {
		s.skipBlank()
		switch s.peek() {
		case ']':
			s.advance()
			return
		case ',':
			s.advance()
		default:
			start := s.pos
			s.value(n.index(i), depth)
			s.unstick(start)
			i++
		}
	}
}

// skipNested skips a bracketed value without recursion.
func (s *keyScanner) skipNested() {
	depth := 0
	for s.pos < len(s.src) {
		switch s.peek() {
		case '"', '\'':
			s.skipString()
			continue
		case '#':
			s.skipComment()
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
		s.advance()
		if depth <= 0 {
			return
		}
	}
}

// skipScalar skips a number, bool or date-time. Those may contain spaces
// ("1979-05-27 07:32:00") but never a delimiter.
func (s *keyScanner) skipScalar() {
	for {
		switch s.peek() {
		case 0, ',', ']', '}', '#', '\n':
			return
		}
		s.advance()
	}
}

func (s *keyScanner) skipString() {
	q := s.peek()
	if s.run(q) >= 3 {
		s.skipMultiline(q)
		return
	}
	s.quoted(q)
}

// quoted reads a single-line string starting at its quote q and returns
// its raw (still escaped) contents.
func (s *keyScanner) quoted(q byte) string {
	s.advance()
	start := s.pos
	for {
		switch c := s.peek(); {
		case c == 0 && s.pos >= len(s.src), c == '\n':
			return string(s.src[start:s.pos])
		case c == q:
			raw := string(s.src[start:s.pos])
			s.advance()
			return raw
		case c == '\\' && q == '"':
			s.advance()
		}
		s.advance()
	}
}

// skipMultiline skips a string opened by three quotes q. It ends at the
// first run of three or more q; up to two of them belong to the contents.
func (s *keyScanner) skipMultiline(q byte) {
	s.advanceN(3)
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == '\\' && q == '"':
			s.advanceN(2)
		case c == q:
			n := s.run(q)
			s.advanceN(n)
			if n >= 3 {
				return
			}
		default:
			s.advance()
		}
	}
}

// run counts the bytes equal to c from the current position.
func (s *keyScanner) run(c byte) int {
	n := 0
	for s.pos+n < len(s.src) && s.src[s.pos+n] == c {
		n++
	}
	return n
}

// peek returns the next byte, or 0 at the end of the input.
func (s *keyScanner) peek() byte {
	if s.pos >= len(s.src) {
		return 0
	}
	return s.src[s.pos]
}

func (s *keyScanner) advance() {
	if s.pos >= len(s.src) {
		return
	}
	if s.src[s.pos] == '\n' {
		s.line++
		s.lineStart = s.pos + 1
	}
	s.pos++
}

// unstick skips a byte if nothing was consumed since start, so that every
// loop ends, whatever the input.
func (s *keyScanner) unstick(start int) {
	if s.pos == start {
		s.advance()
	}
}

func (s *keyScanner) advanceN(n int) {
	for ; n > 0; n-- {
		s.advance()
	}
}

func (s *keyScanner) skipSpace() {
	for c := s.peek(); c == ' ' || c == '\t'; c = s.peek() {
		s.advance()
	}
}

// skipBlank skips whitespace, newlines and comments.
func (s *keyScanner) skipBlank() {
	for {
		switch s.peek() {
		case ' ', '\t', '\r', '\n':
			s.advance()
		case '#':
			s.skipComment()
		default:
			return
		}
	}
}

func (s *keyScanner) skipComment() {
	for c := s.peek(); s.pos < len(s.src) && c != '\n'; c = s.peek() {
		s.advance()
	}
}

// skipLine skips the rest of the line, including its newline.
func (s *keyScanner) skipLine() {
	s.skipComment()
	s.advance()
}

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// unescapeKey decodes the escapes of a basic string, as toml v1.6 does
// (including TOML 1.1's \e and \xHH).
func unescapeKey(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			b.WriteByte(raw[i])
			continue
		}
		i++
		if j := strings.IndexByte(keyEscapeNames, raw[i]); j >= 0 {
			b.WriteByte(keyEscapeValues[j])
			continue
		}
		if n := keyHexDigits[raw[i]]; n > 0 && i+n < len(raw) {
			b.WriteRune(keyHexRune(raw[i+1 : i+1+n]))
			i += n
			continue
		}
		b.WriteByte('\\')
		b.WriteByte(raw[i])
	}
	return b.String()
}

// The one-letter escapes and what they stand for.
const keyEscapeNames, keyEscapeValues = "btnfre\"\\", "\b\t\n\f\r\x1b\"\\"

// keyHexDigits maps an escape letter to its number of hex digits.
var keyHexDigits = map[byte]int{'x': 2, 'u': 4, 'U': 8}

func keyHexRune(digits string) rune {
	v, err := strconv.ParseUint(digits, 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return utf8.RuneError
	}
	return rune(v)
}
