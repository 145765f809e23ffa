package export

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Secret is a provider secret that an export must never carry.
type Secret struct {
	Name  string   // the variable's name: the only part of it an export shows
	Forms []string // its value, raw and encoded, as the runner finds them in text
}

// Mask returns a function that replaces every form of every secret with
// "***" in one pass. Longer forms come first, so that where two forms
// match at the same place the longer one is masked whole.
func Mask(secrets []Secret) func(string) string {
	var forms []string
	for _, s := range secrets {
		forms = append(forms, s.Forms...)
	}
	if len(forms) == 0 {
		return func(s string) string { return s }
	}
	slices.SortStableFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range slices.Compact(forms) {
		pairs = append(pairs, f, "***")
	}
	return strings.NewReplacer(pairs...).Replace
}

// heldBy names the secret a file holds, for a Withheld reason.
func heldBy(name string) string {
	return fmt.Sprintf("it holds the value of the provider variable %q, or an encoding of it", name)
}

// Finder finds the forms of provider secrets in data: what withholds a
// file from an export withholds it from a delivery too.
type Finder struct{ m *matcher }

// NewFinder returns a Finder for secrets.
func NewFinder(secrets []Secret) Finder { return Finder{newMatcher(secrets)} }

// Find returns the name of the first secret one of whose forms is in
// data, or "".
func (f Finder) Find(data []byte) string { return f.m.find(data) }

// matcher finds the forms of secrets in data.
type matcher struct {
	forms   []form
	longest int
	any     *strings.Replacer // removes every form: finds them all in one pass
}

// form is one form of a secret.
type form struct {
	name string // the secret's name
	text []byte
}

func newMatcher(secrets []Secret) *matcher {
	m := &matcher{}
	var pairs []string
	for _, sec := range secrets {
		for _, f := range sec.Forms {
			if f != "" {
				m.forms = append(m.forms, form{sec.Name, []byte(f)})
				m.longest = max(m.longest, len(f))
				pairs = append(pairs, f, "")
			}
		}
	}
	m.any = strings.NewReplacer(pairs...)
	return m
}

// find returns the name of the first secret one of whose forms is in
// data, or "". One pass of the replacer tells whether any is; only then
// are the forms tried one by one.
func (m *matcher) find(data []byte) string {
	if len(m.forms) == 0 {
		return ""
	}
	if s := string(data); m.any.Replace(s) == s {
		return ""
	}
	for _, f := range m.forms {
		if bytes.Contains(data, f.text) {
			return f.name
		}
	}
	return ""
}

// scanner is an io.Writer that looks for the forms of secrets in what is
// written through it, across the boundaries of writes.
type scanner struct {
	m     *matcher
	buf   []byte // the tail of the data so far, then each write after it
	found string // the name of the first secret found
}

// Write looks at the last bytes of what came before (as many as the
// longest form, less one) together with p.
func (s *scanner) Write(p []byte) (int, error) {
	if s.found != "" || s.m.longest == 0 {
		return len(p), nil
	}
	s.buf = append(s.buf, p...)
	s.found = s.m.find(s.buf)
	if keep := s.m.longest - 1; len(s.buf) > keep {
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-keep:]...)
	}
	return len(p), nil
}
