package secret

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

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

// Finder finds the forms of secrets in data.
type Finder struct {
	forms   []form
	longest int
	any     *strings.Replacer // removes every form: finds them all in one pass
}

// form is one form of a secret.
type form struct {
	name string // the secret's name
	text []byte
}

// NewFinder returns a Finder for secrets.
func NewFinder(secrets []Secret) *Finder {
	f := &Finder{}
	var pairs []string
	for _, sec := range secrets {
		for _, text := range sec.Forms {
			if text != "" {
				f.forms = append(f.forms, form{sec.Name, []byte(text)})
				f.longest = max(f.longest, len(text))
				pairs = append(pairs, text, "")
			}
		}
	}
	f.any = strings.NewReplacer(pairs...)
	return f
}

// None reports whether f has no form to find: nothing holds a secret.
func (f *Finder) None() bool { return len(f.forms) == 0 }

// Find returns the name of the first secret one of whose forms is in
// data, or "". One pass of the replacer tells whether any is; only then
// are the forms tried one by one.
func (f *Finder) Find(data []byte) string {
	if f.None() {
		return ""
	}
	if s := string(data); f.any.Replace(s) == s {
		return ""
	}
	for _, fm := range f.forms {
		if bytes.Contains(data, fm.text) {
			return fm.name
		}
	}
	return ""
}

// FindIn reads r until it finds a form of a secret, and returns the
// secret's name, or "" at the end of r. It reads in chunks whose windows
// overlap by the longest form (Scanner), so that no form is missed across
// a boundary.
func (f *Finder) FindIn(r io.Reader) (string, error) {
	s := f.Scanner()
	chunk := make([]byte, 64<<10)
	for {
		n, err := r.Read(chunk)
		_, _ = s.Write(chunk[:n])
		switch {
		case s.found != "":
			return s.found, nil
		case errors.Is(err, io.EOF):
			return "", nil
		case err != nil:
			return "", err
		}
	}
}

// Scanner is an io.Writer that looks for the forms of secrets in what is
// written through it, across the boundaries of writes.
type Scanner struct {
	f     *Finder
	buf   []byte // the tail of the data so far, then each write after it
	found string // the name of the first secret found
}

// Scanner returns a Scanner that looks for f's forms.
func (f *Finder) Scanner() *Scanner { return &Scanner{f: f} }

// Found returns the name of the first secret found so far, or "".
func (s *Scanner) Found() string { return s.found }

// Write looks at the last bytes of what came before (as many as the
// longest form, less one) together with p. It never fails.
func (s *Scanner) Write(p []byte) (int, error) {
	if s.found != "" || s.f.longest == 0 {
		return len(p), nil
	}
	s.buf = append(s.buf, p...)
	s.found = s.f.Find(s.buf)
	if keep := s.f.longest - 1; len(s.buf) > keep {
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-keep:]...)
	}
	return len(p), nil
}

// ErrHeld is wrapped by the error that refuses to deliver a file because
// it holds a secret.
var ErrHeld = errors.New("a file to deliver holds a provider secret")

// HeldError (wrapping ErrHeld) names the file that holds a secret, and
// the secret; never its value.
type HeldError struct{ Path, Variable string }

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s: %q %s; nothing is delivered", ErrHeld, e.Path, Holds(e.Variable))
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Holds says what holds the secret name, by its name alone.
func Holds(name string) string {
	return fmt.Sprintf("holds the value of the provider variable %q, or an encoding of it", name)
}
