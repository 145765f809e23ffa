//go:build linux

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The expression language of ${{ }} as far as the workflows and composite
// actions here use it: context properties (github.event.pull_request.head.sha,
// steps.id.outputs.x, needs.job.outputs.x, inputs.x, secrets.X…), 'strings',
// ==, !=, !, &&, || and parentheses, and the functions startsWith,
// contains, format and the status functions, with GitHub's rules: strings
// compare case-insensitively, '', null and false are falsy, && and ||
// yield an operand, a missing property is null. Anything else fails the
// test, and so does comparing values of different types (GitHub coerces
// them; nothing here should rely on it).

var exprToken = regexp.MustCompile(`\s*('(?:[^']|'')*'|==|!=|&&|\|\||!|\(|\)|,|[A-Za-z_][A-Za-z0-9_.-]*)`)

// exprScope is where an expression's names come from.
type exprScope struct {
	fatalf func(format string, args ...any)
	// lookup reads a context property, path[0] being the context; ok is
	// false for a context or property the runner does not model.
	lookup func(path []string) (v any, ok bool)
	// status answers success(), failure(), always() and cancelled().
	status func(name string) bool
}

type exprParser struct {
	s    exprScope
	expr string
	toks []string
}

func (s exprScope) eval(expr string) any {
	p := &exprParser{s: s, expr: expr}
	rest := expr
	for strings.TrimSpace(rest) != "" {
		m := exprToken.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			s.fatalf("expression %q: cannot read %q", expr, rest)
		}
		p.toks = append(p.toks, rest[m[2]:m[3]])
		rest = rest[m[1]:]
	}
	v := p.or()
	if len(p.toks) > 0 {
		s.fatalf("expression %q: unexpected %q", expr, p.toks[0])
	}
	return v
}

// exprRE finds the ${{ }} in a string.
var exprRE = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// expand replaces every ${{ expression }} in text by its value.
func (s exprScope) expand(text string) string {
	return exprRE.ReplaceAllStringFunc(text, func(m string) string {
		return str(s.eval(exprRE.FindStringSubmatch(m)[1]))
	})
}

// statusCall is a call of a status function in a condition.
var statusCall = regexp.MustCompile(`\b(success|failure|always|cancelled)\s*\(`)

// cond evaluates an if:, which without a status function is
// success() && (if); an empty one is success().
func (s exprScope) cond(text string) bool {
	c := strings.TrimSpace(text)
	if strings.HasPrefix(c, "${{") && strings.HasSuffix(c, "}}") {
		c = c[3 : len(c)-2]
	}
	switch {
	case strings.TrimSpace(c) == "":
		return s.status("success")
	case !statusCall.MatchString(c):
		return s.status("success") && truthy(s.eval(c))
	}
	return truthy(s.eval(c))
}

func (p *exprParser) peek() string {
	if len(p.toks) == 0 {
		return ""
	}
	return p.toks[0]
}

func (p *exprParser) next() string {
	t := p.peek()
	if t == "" {
		p.s.fatalf("expression %q ends too soon", p.expr)
	}
	p.toks = p.toks[1:]
	return t
}

func (p *exprParser) or() any {
	v := p.and()
	for p.peek() == "||" {
		p.next()
		w := p.and()
		if !truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) and() any {
	v := p.cmp()
	for p.peek() == "&&" {
		p.next()
		w := p.cmp()
		if truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) cmp() any {
	v := p.unary()
	for op := p.peek(); op == "==" || op == "!="; op = p.peek() {
		p.next()
		v = p.equal(v, p.unary()) == (op == "==")
	}
	return v
}

// equal compares as GitHub does for values of one type; null equals ”.
func (p *exprParser) equal(a, b any) bool {
	if a == nil {
		a = ""
	}
	if b == nil {
		b = ""
	}
	if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		p.s.fatalf("expression %q compares a %T with a %T", p.expr, a, b)
	}
	switch a := a.(type) {
	case string:
		return strings.EqualFold(a, b.(string))
	case bool, float64:
		return a == b
	}
	p.s.fatalf("expression %q compares objects", p.expr)
	return false
}

func (p *exprParser) unary() any {
	switch t := p.next(); {
	case t == "!":
		return !truthy(p.unary())
	case t == "(":
		v := p.or()
		if p.next() != ")" {
			p.s.fatalf("expression %q: missing )", p.expr)
		}
		return v
	case strings.HasPrefix(t, "'"):
		return strings.ReplaceAll(t[1:len(t)-1], "''", "'")
	case t == "true" || t == "false":
		return t == "true"
	case t == "null":
		return nil
	case p.peek() == "(":
		return p.call(t)
	default:
		v, ok := p.s.lookup(strings.Split(t, "."))
		if !ok {
			p.s.fatalf("expression %q: unknown property %q", p.expr, t)
		}
		return v
	}
}

// call reads a function's arguments and calls it.
func (p *exprParser) call(name string) any {
	p.next() // (
	var args []any
	for p.peek() != ")" {
		args = append(args, p.or())
		if p.peek() == "," {
			p.next()
		}
	}
	p.next() // )
	want := map[string]int{"startsWith": 2, "contains": 2, "success": 0, "failure": 0, "always": 0, "cancelled": 0}
	if n, ok := want[name]; ok && n != len(args) {
		p.s.fatalf("expression %q: %s takes %d arguments", p.expr, name, n)
	}
	switch name {
	case "startsWith":
		return strings.HasPrefix(strings.ToLower(str(args[0])), strings.ToLower(str(args[1])))
	case "contains":
		return strings.Contains(strings.ToLower(str(args[0])), strings.ToLower(str(args[1])))
	case "format":
		return p.format(args)
	case "success", "failure", "always", "cancelled":
		return p.s.status(name)
	}
	p.s.fatalf("expression %q: function %s is not modelled", p.expr, name)
	return nil
}

// format is format('…{0}…', args…), with {{ and }} for braces.
func (p *exprParser) format(args []any) string {
	if len(args) == 0 {
		p.s.fatalf("expression %q: format needs a format string", p.expr)
	}
	f := str(args[0])
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		switch {
		case strings.HasPrefix(f[i:], "{{"), strings.HasPrefix(f[i:], "}}"):
			b.WriteByte(f[i])
			i++
		case f[i] == '{':
			end := strings.IndexByte(f[i:], '}')
			n, err := strconv.Atoi(f[i+1 : i+max(end, 1)])
			if end < 0 || err != nil || n+1 >= len(args) {
				p.s.fatalf("expression %q: bad format %q", p.expr, f)
			}
			b.WriteString(str(args[n+1]))
			i += end
		default:
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	}
	return true // objects and arrays
}

// str is a value as ${{ }} puts it into text.
func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// property walks an object (a decoded JSON event) along path; a missing
// property is null.
func property(v any, path []string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}
