package process

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{name: "nil", argv: nil, want: ""},
		{name: "empty word", argv: []string{""}, want: "''"},
		{name: "plain words", argv: []string{"go", "test", "-race", "./..."}, want: "go test -race ./..."},
		{name: "all safe punctuation", argv: []string{"_./:=@%+,-"}, want: "_./:=@%+,-"},
		{name: "flag with value", argv: []string{"--out=a/b.json", "-n", "3"}, want: "--out=a/b.json -n 3"},
		{name: "space", argv: []string{"echo", "hello world"}, want: "echo 'hello world'"},
		{name: "dollar", argv: []string{"sh", "-c", "echo $HOME"}, want: "sh -c 'echo $HOME'"},
		{name: "single quote", argv: []string{"it's"}, want: `'it'\''s'`},
		{name: "only a quote", argv: []string{"'"}, want: `''\'''`},
		{name: "double quote", argv: []string{`say "hi"`}, want: `'say "hi"'`},
		{name: "glob and tilde", argv: []string{"*.go", "~"}, want: "'*.go' '~'"},
		{name: "newline and tab", argv: []string{"a\nb", "c\td"}, want: "'a\nb' 'c\td'"},
		{name: "backslash", argv: []string{`a\b`}, want: `'a\b'`},
		{name: "non-ascii", argv: []string{"héllo"}, want: "'héllo'"},
		{name: "empty among words", argv: []string{"printf", "", "x"}, want: "printf '' x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Quote(tt.argv)); diff != "" {
				t.Errorf("Quote(%q) mismatch (-want +got):\n%s", tt.argv, diff)
			}
		})
	}
}

func TestShellArgv(t *testing.T) {
	t.Parallel()
	want := []string{"/bin/sh", "-c", "go test ./... && echo ok"}
	if runtime.GOOS == "windows" {
		want[0] = "sh"
	}
	if diff := cmp.Diff(want, ShellArgv("go test ./... && echo ok")); diff != "" {
		t.Errorf("ShellArgv mismatch (-want +got):\n%s", diff)
	}
}

func ExampleQuote() {
	fmt.Println(Quote([]string{"sh", "-c", "echo 'hi' > out.txt"}))
	// Output: sh -c 'echo '\''hi'\'' > out.txt'
}
