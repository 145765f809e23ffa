package workspace

import (
	"slices"
	"strconv"
	"strings"
)

// attrStack is the attributes files that apply below a directory, from
// the top down.
type attrStack []*attrFile

// push returns a copy of the stack with f on top.
func (s attrStack) push(f *attrFile) attrStack {
	out := make(attrStack, len(s), len(s)+1)
	copy(out, s)
	return append(out, f)
}

// attrValue is an attribute's value for a path and the line that gave it.
type attrValue struct {
	value  string // attrSet, attrUnset, attrUnspecified or a value
	dir    string // the directory of the attributes file that set it
	lineno int
	from   bool // a line set it: the attribute is assigned
}

// origin names the line that set the value: ".gitattributes:3".
func (v attrValue) origin() string {
	return join(v.dir, ".gitattributes") + ":" + strconv.Itoa(v.lineno)
}

// namedValue is an attribute and its value.
type namedValue struct {
	name string
	attrValue
}

// attrList is the attributes assigned to a path, in no order.
type attrList []namedValue

// get returns the value of the attribute name (not from a line when
// unassigned).
func (l attrList) get(name string) attrValue {
	for _, a := range l {
		if a.name == name {
			return a.attrValue
		}
	}
	return attrValue{}
}

// attrs is what the stack assigns to the file at path, in buf[:0]:
// attr.c's collect_some_attrs for every attribute.
func (s attrStack) attrs(path string, buf attrList) attrList {
	out := buf[:0]
	if len(s) == 0 {
		return out
	}
	base := path[strings.LastIndexByte(path, '/')+1:]
	macros := builtinMacros
	if s[0].dir == "" {
		macros = s[0].macros
	}
	for i := len(s) - 1; i >= 0; i-- {
		f := s[i]
		for j := len(f.lines) - 1; j >= 0; j-- {
			l := &f.lines[j]
			if l.macro == "" && l.matches(path, base, f.dir, false) {
				out = fill(out, macros, attrValue{dir: f.dir, lineno: l.lineno, from: true}, l.assigns)
			}
		}
	}
	return out
}

// builtinMacros is git's built-in macro, "[attr]binary -diff -merge -text".
var builtinMacros = []macroDef{{"binary", []attrAssign{{"diff", attrUnset}, {"merge", attrUnset}, {"text", attrUnset}}}}

// macrosOf returns the macros in force below the top-level file f, the
// winning first: its own, last first, then the built-in one.
func macrosOf(f *attrFile) []macroDef {
	var m []macroDef
	for j := len(f.lines) - 1; j >= 0; j-- {
		if l := &f.lines[j]; l.macro != "" {
			m = append(m, macroDef{l.macro, l.assigns})
		}
	}
	return append(m, builtinMacros...)
}

// macroDef is a macro and what it assigns.
type macroDef struct {
	name    string
	assigns []attrAssign
}

// fill is attr.c's fill_one: the assignments, last first, to attributes
// not assigned yet, by the line at; a set macro expands the same way.
func fill(out attrList, macros []macroDef, at attrValue, assigns []attrAssign) attrList {
	for k := len(assigns) - 1; k >= 0; k-- {
		a := assigns[k]
		if out.get(a.name).from {
			continue
		}
		v := at
		v.value = a.value
		out = append(out, namedValue{a.name, v})
		i := slices.IndexFunc(macros, func(m macroDef) bool { return m.name == a.name })
		if i >= 0 && a.value == attrSet {
			out = fill(out, macros, at, macros[i].assigns)
		}
	}
	return out
}
