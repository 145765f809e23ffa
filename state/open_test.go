package state_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/state"
)

func TestValidRunID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   string
		want string // a substring of the error; "" when valid
	}{
		{"quickstart/pr-12", ""},
		{"nightly/main", ""},
		{"a", ""},
		{"A.b_c-D/0.9/x", ""},
		{"loop/release-1.0", ""},
		{"ledger/x", "segment \"ledger\""},
		{strings.Repeat("x", 200), ""},
		{strings.Repeat("x", 201), "201 bytes; the limit is 200"},
		{"", "empty"},
		{"../x", `segment ".." is not allowed`},
		{"a/../b", `segment ".." is not allowed`},
		{"..", `segment ".." is not allowed`},
		{".", `segment "." is not allowed`},
		{"a/./b", `segment "." is not allowed`},
		{"/abs", "starts or ends with '/'"},
		{"a/", "starts or ends with '/'"},
		{"a//b", "empty segment"},
		{"a b", `' ' at byte 1`},
		{" a", `' ' at byte 0`},
		{"a\\b", `'\\' at byte 1`},
		{"a\x00b", `'\x00' at byte 1`},
		{"é", `at byte 0`},
		{"a:b", `':' at byte 1`},
		{"a/.lock", `segment ".lock" starts with '.'`},
		{"a/.hidden", `starts with '.'`},
		{"a/run.log", `segment "run.log" is the name of a file`},
		{"a/Checkpoint.JSON", `segment "Checkpoint.JSON" is the name of a file`},
		{"a/summaries/b", `segment "summaries"`},
		{"a/reviews.json", `segment "reviews.json"`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			err := state.ValidRunID(tt.id)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("ValidRunID(%q) = %q, want an error containing %q", tt.id, got, tt.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	abs := filepath.Join(t.TempDir(), "elsewhere")
	tests := []struct {
		spec    string
		path    string // the store's directory when Open succeeds
		wantErr string
	}{
		{spec: "dir:.loop/state", path: filepath.Join(root, ".loop", "state")},
		{spec: state.DefaultSpec, path: filepath.Join(root, ".loop", "state")},
		{spec: "dir:" + abs, path: abs},
		{spec: "dir:", wantErr: `state store "dir:": dir: needs a path; want dir:PATH`},
		{spec: "branch:loop-state", wantErr: "the branch: state store is not available yet; use dir:PATH"},
		{spec: "branch:", wantErr: "the branch: state store is not available yet; use dir:PATH"},
		{spec: "s3:bucket", wantErr: `state store "s3:bucket": unknown kind "s3"; want dir:PATH`},
		{spec: "bogus", wantErr: `state store "bogus": want dir:PATH`},
		{spec: "", wantErr: "state store: empty --state; want dir:PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			d, err := state.Open(tt.spec, root)
			got, gotErr := "", ""
			if err != nil {
				gotErr = err.Error()
			} else {
				got = d.Path()
				d.Close()
			}
			if diff := cmp.Diff([2]string{tt.path, tt.wantErr}, [2]string{got, gotErr}); diff != "" {
				t.Errorf("Open(%q) path, error (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}
