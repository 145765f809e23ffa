// Package environ owns the environment a process is started with: a list
// of NAME=value entries as os/exec takes it, read and edited the way
// os/exec reads it, so that what loop-action looks up, drops or sets is
// what the child sees.
//
// It is a leaf: it imports nothing of loop-action's, so that every layer
// can use it. The standard library has no such type (os/exec dedups an
// environment only when it starts a process, and does not export it), so
// these few functions are ours.
package environ

import (
	"iter"
	"runtime"
	"strings"
)

// Env is an environment: NAME=value entries, in order. A name set more
// than once has its last value, as os/exec gives the child. Names compare
// as os/exec compares them: case-insensitively on Windows, exactly
// elsewhere. An entry without "=" is a name without a value: os/exec
// passes it on, but the child has no such variable, so Lookup and All
// never find it while Without drops it. A nil Env is empty; the methods
// that edit one return a new, non-nil Env and never change e, so that a
// command given the result inherits nothing from this process.
type Env []string

// fold is whether names compare case-insensitively, as os/exec's dedupEnv
// does on Windows.
var fold = runtime.GOOS == "windows"

// split is the name and value of the entry kv as os/exec reads it: up to
// the first "=", where a leading "=" belongs to the name (Windows keeps
// its per-drive directories as "=C:=C:\dir"). When kv has no "=", name
// is all of it and ok is false.
func split(kv string) (name, value string, ok bool) {
	i := strings.Index(kv, "=")
	if i == 0 {
		i = strings.Index(kv[1:], "=") + 1
	}
	if i < 0 {
		return kv, "", false
	}
	return kv[:i], kv[i+1:], true
}

// same reports whether two names are the same variable.
func same(fold bool, a, b string) bool {
	if fold {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// Lookup returns the last value of name in e, and whether e sets it.
func (e Env) Lookup(name string) (string, bool) {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := split(e[i]); ok && same(fold, k, name) {
			return v, true
		}
	}
	return "", false
}

// Get is the value of name in e, "" when e does not set it.
func (e Env) Get(name string) string {
	v, _ := e.Lookup(name)
	return v
}

// All yields each variable of e with its value, in order, duplicates and
// all: collected into a map (maps.Collect) the last one wins, as in
// Lookup.
func (e Env) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, kv := range e {
			if k, v, ok := split(kv); ok && !yield(k, v) {
				return
			}
		}
	}
}

// WithoutFunc is e without every entry whose name drop reports true for.
func (e Env) WithoutFunc(drop func(name string) bool) Env {
	out := make(Env, 0, len(e))
	for _, kv := range e {
		if k, _, _ := split(kv); !drop(k) {
			out = append(out, kv)
		}
	}
	return out
}

// Without is e without every entry of the variables names.
func (e Env) Without(names ...string) Env {
	return e.WithoutFunc(func(k string) bool {
		for _, n := range names {
			if same(fold, k, n) {
				return true
			}
		}
		return false
	})
}

// With is e with name set to value: every earlier entry of name dropped,
// and name=value last.
func (e Env) With(name, value string) Env {
	return append(e.Without(name), name+"="+value)
}
