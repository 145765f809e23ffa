package workspace

import "strings"

// attrStack is the attributes files that apply below a directory, from
// the top-level one down (nil holds none): what git's attribute stack
// holds for a path, without the files that never travel with a commit.
type attrStack []*attrFile

// push returns the stack with f on top, sharing nothing with s that a
// later push could change.
func (s attrStack) push(f *attrFile) attrStack {
	out := make(attrStack, len(s), len(s)+1)
	copy(out, s)
	return append(out, f)
}

// attrValue is an attribute's value for a path and the line that gave it.
type attrValue struct {
	value  string // attrSet, attrUnset, attrUnspecified or a value
	file   *attrFile
	lineno int
}

// origin names the line that set the value: ".gitattributes:3", or
// "git's built-in binary macro".
func (v attrValue) origin() string {
	if v.file == builtinAttrs {
		return "git's built-in binary macro"
	}
	return v.file.src() + ":" + itoa(v.lineno)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return string(b[i:])
}

// attrs is what the stack assigns to the file at path (slash-separated,
// relative to the top): attr.c's collect_some_attrs for every attribute.
// Unassigned attributes are absent; attrUnspecified ones are present.
func (s attrStack) attrs(path string) map[string]attrValue {
	if len(s) == 0 {
		return nil
	}
	macros := s.macros()
	out := map[string]attrValue{}
	base := path[strings.LastIndexByte(path, '/')+1:]
	for i := len(s) - 1; i >= 0; i-- {
		f := s[i]
		for j := len(f.lines) - 1; j >= 0; j-- {
			l := &f.lines[j]
			if l.macro == "" && l.matches(path, base, f.dir) {
				fill(out, macros, f, l)
			}
		}
	}
	return out
}

// macros returns the macros in force: the top-level file's (its last
// definition of a name wins) and git's built-in one.
func (s attrStack) macros() map[string]macroDef {
	m := map[string]macroDef{"binary": {builtinAttrs, &builtinAttrs.lines[0]}}
	if len(s) == 0 || s[0].dir != "" {
		return m
	}
	for j := range s[0].lines {
		if l := &s[0].lines[j]; l.macro != "" {
			m[l.macro] = macroDef{s[0], l}
		}
	}
	return m
}

// macroDef is a macro's line and the file it is in.
type macroDef struct {
	file *attrFile
	line *attrLine
}

// fill is attr.c's fill_one: the line's assignments, the last first, to
// the attributes not assigned yet, expanding a macro that is set.
func fill(out map[string]attrValue, macros map[string]macroDef, f *attrFile, l *attrLine) {
	for k := len(l.assigns) - 1; k >= 0; k-- {
		a := l.assigns[k]
		if _, done := out[a.name]; done {
			continue
		}
		out[a.name] = attrValue{value: a.value, file: f, lineno: l.lineno}
		if m, ok := macros[a.name]; ok && a.value == attrSet {
			expand(out, macros, m, attrValue{file: f, lineno: l.lineno})
		}
	}
}

// expand fills what macro m assigns, as set by the line at.
func expand(out map[string]attrValue, macros map[string]macroDef, m macroDef, at attrValue) {
	for k := len(m.line.assigns) - 1; k >= 0; k-- {
		a := m.line.assigns[k]
		if _, done := out[a.name]; done {
			continue
		}
		out[a.name] = attrValue{value: a.value, file: at.file, lineno: at.lineno}
		if n, ok := macros[a.name]; ok && a.value == attrSet {
			expand(out, macros, n, at)
		}
	}
}

// matches is attr.c's path_matches for a file (never a directory) at
// path, whose base name is base, against a line of the file in dir.
func (l *attrLine) matches(path, base, dir string) bool {
	if l.mustDir {
		return false
	}
	if l.noDir {
		if l.prefix == len(l.pattern) {
			return l.pattern == base
		}
		return wildmatch(l.pattern, base, false)
	}
	return matchPathname(path, dir, l.pattern, l.prefix)
}

// matchPathname is dir.c's match_pathname: pattern (with its literal
// prefix of length prefix) anchored at the directory base.
func matchPathname(path, base, pattern string, prefix int) bool {
	if strings.HasPrefix(pattern, "/") {
		pattern, prefix = pattern[1:], prefix-1
	}
	name := path
	if base != "" {
		rest, ok := strings.CutPrefix(path, base+"/")
		if !ok {
			return false
		}
		name = rest
	}
	if prefix > 0 {
		if prefix > len(name) || name[:prefix] != pattern[:prefix] {
			return false
		}
		pattern, name = pattern[prefix:], name[prefix:]
		if pattern == "" && name == "" {
			return true
		}
	}
	return wildmatch(pattern, name, true)
}
