package loop

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The byte level of the key scanner (position.go): where strings,
// comments, blanks and scalars end, the cursor with its line and column,
// and the escapes of quoted keys. Nothing here knows about tables or
// paths.

// skipScalar skips a number, bool or date-time. Those may contain spaces
// ("1979-05-27 07:32:00") but never a delimiter, a bracket or a quote: it
// stops at those, so that nothing nested hides inside a malformed value.
func (s *keyScanner) skipScalar() {
	for s.pos < len(s.src) {
		switch s.peek() {
		case ',', ']', '}', '[', '{', '"', '\'', '#', '\n':
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
