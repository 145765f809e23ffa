//go:build linux

package main

import (
	"regexp"
	"strings"
)

// The expression language of ${{ }} as far as composite actions here use
// it: context properties (inputs.x, github.x, runner.x,
// steps.id.outputs.x), 'strings', ==, !=, !, &&, || and parentheses, with
// GitHub's rules: strings compare case-insensitively, '' is falsy, &&
// and || yield an operand.

var exprToken = regexp.MustCompile(`\s*('(?:[^']|'')*'|==|!=|&&|\|\||!|\(|\)|[A-Za-z_][A-Za-z0-9_.-]*)`)

type exprParser struct {
	c    *composite
	toks []string
}

func (c *composite) eval(expr string) any {
	p := &exprParser{c: c}
	rest := expr
	for strings.TrimSpace(rest) != "" {
		m := exprToken.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			c.t.Fatalf("expression %q: cannot read %q", expr, rest)
		}
		p.toks = append(p.toks, rest[m[2]:m[3]])
		rest = rest[m[1]:]
	}
	v := p.or()
	if len(p.toks) > 0 {
		c.t.Fatalf("expression %q: unexpected %q", expr, p.toks[0])
	}
	return v
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
		p.c.t.Fatalf("expression ends too soon")
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
		eq := strings.EqualFold(str(v), str(p.unary()))
		v = eq == (op == "==")
	}
	return v
}

func (p *exprParser) unary() any {
	switch t := p.next(); {
	case t == "!":
		return !truthy(p.unary())
	case t == "(":
		v := p.or()
		if p.next() != ")" {
			p.c.t.Fatalf("expression: missing )")
		}
		return v
	case strings.HasPrefix(t, "'"):
		return strings.ReplaceAll(t[1:len(t)-1], "''", "'")
	case t == "true" || t == "false":
		return t == "true"
	default:
		return p.c.lookup(t)
	}
}

// lookup reads a context property; an unknown context fails the test.
func (c *composite) lookup(name string) string {
	parts := strings.Split(name, ".")
	var v string
	var ok bool
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		v, ok = c.inputs[parts[1]]
	case len(parts) == 2 && parts[0] == "github":
		v, ok = c.github[parts[1]]
	case len(parts) == 2 && parts[0] == "runner":
		v, ok = c.runner[parts[1]]
	case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
		return c.outputs[parts[1]][parts[3]] // a skipped step's outputs are empty
	}
	if !ok {
		c.t.Fatalf("expression: unknown property %q", name)
	}
	return v
}

func truthy(v any) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return v.(string) != ""
}

func str(v any) string {
	if b, ok := v.(bool); ok {
		if b {
			return "true"
		}
		return "false"
	}
	return v.(string)
}
