package state_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
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
		{"a/log", `segment "log" is the name of a file`},
		{"a/Workspace/b", `segment "Workspace" is the name of a file`},
		{"logs/workspaces", ""},
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
		{spec: "branch:loop-state", wantErr: `state store "branch:loop-state": a branch: store needs a remote; open it with OpenStore`},
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

func TestOpenStore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bare := newBare(t, t.TempDir(), "state.git")
	tests := []struct {
		spec    string
		remote  string
		path    string // the store's Path when OpenStore succeeds
		wantErr string
	}{
		{spec: "dir:.loop/state", path: filepath.Join(root, ".loop", "state")},
		{spec: "branch:loop-state", remote: "file://" + bare, path: filepath.Join(root, ".loop", "state-git")},
		{spec: "branch:runs/nightly", remote: bare, path: filepath.Join(root, ".loop", "state-git")},
		{spec: "branch:", wantErr: `state store "branch:": branch: needs a branch name; want branch:NAME`},
		{spec: "branch:a..b", remote: bare, wantErr: `state store "branch:a..b": open state branch "a..b": branch "a..b" refused as a state branch: git does not allow it as a branch name (see git check-ref-format)`},
		{spec: "branch:HEAD", remote: bare, wantErr: `state store "branch:HEAD": open state branch "HEAD": branch "HEAD" refused as a state branch: HEAD names the checked-out commit, not a branch`},
		{spec: "branch:refs/heads/x", remote: bare, wantErr: `state store "branch:refs/heads/x": open state branch "refs/heads/x": branch "refs/heads/x" refused as a state branch: give the branch's short name, without refs/`},
		{spec: "branch:-x", remote: bare, wantErr: `state store "branch:-x": open state branch "-x": branch "-x" refused as a state branch: git does not allow a branch name that starts with '-'`},
		{spec: "branch:a.lock", remote: bare, wantErr: `state store "branch:a.lock": open state branch "a.lock": branch "a.lock" refused as a state branch: git does not allow it as a branch name (see git check-ref-format)`},
		{spec: "branch:loop-state", wantErr: `state store "branch:loop-state": open state branch "loop-state": remote "origin": the loop root`},
		{spec: "dir:", wantErr: `state store "dir:": dir: needs a path; want dir:PATH`},
		{spec: "s3:bucket", wantErr: `state store "s3:bucket": unknown kind "s3"; want dir:PATH or branch:NAME`},
		{spec: "bogus", wantErr: `state store "bogus": want dir:PATH or branch:NAME`},
		{spec: "", wantErr: "state store: empty --state; want dir:PATH or branch:NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			s, err := state.OpenStore(t.Context(), tt.spec, root, state.RemoteOptions{Remote: tt.remote})
			got, gotErr := "", ""
			if err != nil {
				gotErr = err.Error()
				if s != nil {
					t.Errorf("OpenStore returned a store with its error: %#v", s)
				}
			} else {
				got = s.Path()
				s.Close()
			}
			if tt.wantErr != "" && strings.HasPrefix(gotErr, tt.wantErr) {
				gotErr = tt.wantErr // the rest names a temporary directory
			}
			if diff := cmp.Diff([2]string{tt.path, tt.wantErr}, [2]string{got, gotErr}); diff != "" {
				t.Errorf("OpenStore(%q) path, error (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}
