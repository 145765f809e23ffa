package phrase_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/phrase"
)

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "0 entries"},
		{1, "1 entry"},
		{2, "2 entries"},
		{-1, "-1 entries"},
	} {
		if diff := cmp.Diff(tc.want, phrase.Plural(tc.n, "entry", "entries")); diff != "" {
			t.Errorf("Plural(%d) (-want +got):\n%s", tc.n, diff)
		}
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"0123456", "0123456"},
		{"01234567", "0123456"},
		{"4b825dc642cb6eb9a060e54bf8d69288fbee4904", "4b825dc"},
	} {
		if diff := cmp.Diff(tc.want, phrase.Short(tc.in)); diff != "" {
			t.Errorf("Short(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"fits", "go test ./...", 80, "go test ./..."},
		{"exactly n", "abcde", 5, "abcde"},
		{"cut marks the cut", "abcdef", 5, "abcd…"},
		{"cuts runes, not bytes", "ééééééé", 4, "ééé…"},
		{"white space becomes one space", "  a\n\tb \r\n c  ", 80, "a b c"},
		{"invalid UTF-8 is replaced", "a\xffb", 80, "a\uFFFDb"},
		{"one rune", "abc", 1, "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, phrase.Line(tc.in, tc.n)); diff != "" {
				t.Errorf("Line(%q, %d) (-want +got):\n%s", tc.in, tc.n, diff)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff("a b `c`", phrase.OneLine("a\n\nb   `c`\n")); diff != "" {
		t.Errorf("OneLine (-want +got):\n%s", diff)
	}
}

// TestLeaf keeps phrase a leaf of the standard library's string packages
// (and time, for its Duration type): the gate, which must do no I/O, and
// the ledger import it.
func TestLeaf(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"strconv": true, "strings": true, "time": true, "unicode/utf8": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); !allowed[path] {
				t.Errorf("%s imports %q: phrase formats strings and imports nothing else", f, path)
			}
		}
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{100 << 20, "100 MiB"},
		{100<<20 + 1, "100.0 MiB"},
		{3 << 29, "1.5 GiB"},
		{1 << 40, "1 TiB"},
	} {
		if diff := cmp.Diff(tc.want, phrase.Bytes(tc.n)); diff != "" {
			t.Errorf("Bytes(%d) (-want +got):\n%s", tc.n, diff)
		}
	}
}

func TestCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"go test ./...", "`go test ./...`"},
		{"", "`  `"},
		{"a `b` c", "``a `b` c``"},
		{"a ``` b ` c", "````a ``` b ` c````"},
		{"`x`", "`` `x` ``"},
		{" lead", "`  lead `"},
		{"trail ", "` trail  `"},
		{"@octocat <b>[x](y)</b>", "`@octocat <b>[x](y)</b>`"},
	} {
		if got := phrase.Code(tc.in); got != tc.want {
			t.Errorf("Code(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0.0s"},
		{4200 * time.Millisecond, "4.2s"},
		{59940 * time.Millisecond, "59.9s"},
		{time.Minute, "1m0s"},
		{125400 * time.Millisecond, "2m5s"},
		{90 * time.Minute, "1h30m0s"},
	} {
		if got := phrase.Duration(tc.in); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFence(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "```", "no ticks": "```", "a `b` c": "```", "```": "````", "x`````y``": "``````"} {
		if got := phrase.Fence(in); got != want {
			t.Errorf("Fence(%q) = %q, want %q", in, got, want)
		}
	}
}
