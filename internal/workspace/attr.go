package workspace

import (
	"bytes"
	"strconv"
	"strings"
)

// Git attributes, read and matched as git 2.39 does (attr.c, dir.c,
// wildmatch.c). go-git's gitattributes does not match git: earlier lines,
// lower files and macros override what they should not, it has no
// built-in "binary", accepts "!" patterns, lets "dir/" match below,
// matches with filepath.Match, and neither unquotes C-style patterns nor
// drops lines with invalid names; the certified bytes cannot be
// approximate.
//
// Read: every directory's .gitattributes (deeper files and later lines
// win), macros from the top-level file only, and the built-in binary
// macro. Not read: info/attributes, core.attributesFile, the system file:
// no commit carries them. A link named .gitattributes is read as its
// target text, as a checkout parses it (from the index, where a link's
// blob is its target; `git add` falls back to the index for a link).
// Anything else not a regular file holds no attributes.

// Attribute values, as git's ATTR__TRUE, ATTR__FALSE and ATTR__UNSET:
// "text", "-text", "!text". Any other string is a value ("eol=crlf").
const (
	attrSet         = "\x00set"
	attrUnset       = "\x00unset"
	attrUnspecified = "\x00unspecified"
)

// Limits git applies: longer lines and larger files are ignored.
const (
	attrMaxLine = 2048
	attrMaxFile = 100 << 20
)

// attrAssign is one attribute a line assigns.
type attrAssign struct {
	name, value string
}

// attrLine is one line of an attributes file: a pattern or a macro, and
// what it assigns.
type attrLine struct {
	macro       string // the macro it defines; "" for a pattern line
	pathPattern        // a pattern line's pattern; it matches files alone
	assigns     []attrAssign
	lineno      int
}

// attrFile is one attributes file: its directory ("" for the top) and
// its lines.
type attrFile struct {
	dir    string
	lines  []attrLine
	macros []macroDef // at the top: the macros in force (macrosOf)
}

// parseAttrs parses the attributes file of directory dir. Read from the
// working tree (fromFile), git strips a UTF-8 BOM and CRs before LF and
// reads every line; from a blob (a checkout), it reads up to the first
// NUL and splits at LF alone. Macros are kept only at the top.
func parseAttrs(data []byte, dir string, fromFile bool) *attrFile {
	f := &attrFile{dir: dir}
	if dir == "" {
		defer func() { f.macros = macrosOf(f) }()
	}
	if len(data) >= attrMaxFile {
		return f
	}
	if fromFile {
		data = bytes.TrimPrefix(data, utf8BOM)
	} else if i := bytes.IndexByte(data, 0); i >= 0 {
		data = data[:i]
	}
	lineno := 0
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		lineno++
		if fromFile {
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if i := bytes.IndexByte(line, 0); i >= 0 {
				line = line[:i]
			}
		}
		if l, ok := parseAttrLine(string(line), dir == ""); ok {
			l.lineno = lineno
			f.lines = append(f.lines, l)
		}
	}
	return f
}

const attrBlank = " \t\r\n"

// parseAttrLine is attr.c's parse_attr_line: ok is false for a blank
// line, a comment, and a line git ignores (too long, a macro where none
// is allowed, an invalid attribute name, a negative pattern).
func parseAttrLine(line string, macroOK bool) (attrLine, bool) {
	cp := strings.TrimLeft(line, attrBlank)
	if cp == "" || cp[0] == '#' || len(line) >= attrMaxLine {
		return attrLine{}, false
	}
	var name, states string
	if u, rest, ok := unquoteC(cp); ok {
		name, states = u, rest
	} else {
		n := strings.IndexAny(cp, attrBlank)
		if n < 0 {
			n = len(cp)
		}
		name, states = cp[:n], cp[n:]
	}
	var l attrLine
	if len(name) > len("[attr]") && strings.HasPrefix(name, "[attr]") {
		if !macroOK {
			return attrLine{}, false
		}
		m := strings.TrimLeft(name[len("[attr]"):], attrBlank)
		if n := strings.IndexAny(m, attrBlank); n >= 0 {
			m = m[:n]
		}
		if !validAttrName(m) {
			return attrLine{}, false
		}
		l.macro = m
	}
	var ok bool
	if l.assigns, ok = parseAssigns(strings.TrimLeft(states, attrBlank)); !ok {
		return attrLine{}, false
	}
	if l.macro != "" {
		return l, true
	}
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i] // git copies the pattern into a C string
	}
	if strings.HasPrefix(name, "!") {
		return attrLine{}, false // "Negative patterns are ignored in git attributes"
	}
	l.pathPattern = parsePathPattern(name)
	return l, true
}

// parseAssigns parses the attribute states of a line ("a -b !c d=v"); ok is
// false when one has an invalid name, which drops the whole line.
func parseAssigns(states string) ([]attrAssign, bool) {
	var out []attrAssign
	for cp := states; cp != ""; {
		ep := strings.IndexAny(cp, attrBlank)
		if ep < 0 {
			ep = len(cp)
		}
		eq := strings.IndexByte(cp, '=')
		if eq > ep {
			eq = -1
		}
		n := ep
		if eq >= 0 {
			n = eq
		}
		a := attrAssign{name: cp[:n], value: attrSet}
		switch {
		case strings.HasPrefix(a.name, "-"):
			a.name, a.value = a.name[1:], attrUnset
		case strings.HasPrefix(a.name, "!"):
			a.name, a.value = a.name[1:], attrUnspecified
		case eq >= 0:
			a.value = cp[eq+1 : ep]
		}
		if !validAttrName(a.name) {
			return nil, false
		}
		out = append(out, a)
		cp = strings.TrimLeft(cp[ep:], attrBlank)
	}
	return out, true
}

// validAttrName is attr.c's attr_name_valid.
func validAttrName(name string) bool {
	if name == "" || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '-' || c == '.' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// simpleLength is dir.c's simple_length: the length of s before its first
// glob special.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if globSpecial(s[i]) || s[i] == 0 {
			return i
		}
	}
	return len(s)
}

// unquoteC is quote.c's unquote_c_style for a string starting with a
// double quote: the unquoted text and what follows the closing quote.
// ok is false when s is not such a string, or a malformed one.
func unquoteC(s string) (string, string, bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		i++
		switch c {
		case '"':
			return b.String(), s[i:], true
		case '\\':
		default:
			b.WriteByte(c)
			continue
		}
		if i >= len(s) {
			return "", "", false
		}
		c = s[i]
		i++
		if esc := strings.IndexByte("abfnrtv", c); esc >= 0 {
			b.WriteByte("\a\b\f\n\r\t\v"[esc])
			continue
		}
		switch {
		case c == '\\' || c == '"':
			b.WriteByte(c)
		case c >= '0' && c <= '3' && i+1 < len(s):
			v, err := strconv.ParseUint(s[i-1:i+2], 8, 8)
			if err != nil {
				return "", "", false
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", "", false
		}
	}
	return "", "", false
}
