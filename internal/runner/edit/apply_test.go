package edit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/workspace"
)

// tree makes a loop root holding files (path → content) with a .git and a
// .loop, a directory link "linked" to a directory outside the root and a
// file link "alias" to a file outside it. It returns the root and the
// outside directory.
func tree(t *testing.T, files map[string]string) (root, outside string) {
	t.Helper()
	root, outside = t.TempDir(), t.TempDir()
	all := map[string]string{".git/config": "[core]\n", ".loop/state/run.json": "{}\n", "sub/.git/HEAD": "ref\n"}
	for p, c := range files {
		all[p] = c
	}
	for p, c := range all {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "target.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "target.txt"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

// contents reads every regular file below dir, links not followed.
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func protect(rel string) string {
	if rel == "loop.toml" || strings.HasPrefix(rel, "secret/") {
		return "it is protected"
	}
	return ""
}

func TestApply(t *testing.T) {
	t.Parallel()
	start := map[string]string{"a.go": "package a\n\nfunc A() int { return 1 }\n", "loop.toml": "name = \"x\"\n", "twice.txt": "x\nx\n"}
	tests := []struct {
		name    string
		blocks  []Block
		written []string
		changed map[string]string // the files that differ afterwards
		wantErr []string          // substrings of the error, one per problem
	}{
		{name: "replace", blocks: []Block{{"a.go", "return 1", "return 2"}}, written: []string{"a.go"},
			changed: map[string]string{"a.go": "package a\n\nfunc A() int { return 2 }\n"}},
		{name: "create in a new directory, then edit it", blocks: []Block{{"new/b.go", "", "package b\n"}, {"new/b.go", "package b\n", "package bb\n"}},
			written: []string{"new/b.go"}, changed: map[string]string{"new/b.go": "package bb\n"}},
		{name: "outside the root", blocks: []Block{{"../x", "", "pwned\n"}}, wantErr: []string{`edit of "../x" refused: the path leads outside the loop root`}},
		{name: "absolute", blocks: []Block{{"/tmp/x", "", "pwned\n"}}, wantErr: []string{`"/tmp/x" refused: the path is not relative`}},
		{name: "unclean", blocks: []Block{{"a/../a.go", "1", "2"}}, wantErr: []string{`refused: the path is not clean`}},
		{name: "into .loop", blocks: []Block{{".loop/state/run.json", "{}", `{"status":"success"}`}}, wantErr: []string{`refused: the path is inside .loop`}},
		{name: "into .git", blocks: []Block{{".git/config", "[core]\n", "[core]\nhooksPath = x\n"}}, wantErr: []string{`refused: the path is inside a .git directory`}},
		{name: "into a nested .GIT", blocks: []Block{{"sub/.GIT/hooks/pre-commit", "", "#!/bin/sh\n"}}, wantErr: []string{`inside a .git directory`}},
		{name: "through a directory link", blocks: []Block{{"linked/target.txt", "outside", "pwned"}}, wantErr: []string{`refused: its parent "linked" is a symbolic link`}},
		{name: "a file link", blocks: []Block{{"alias", "outside", "pwned"}}, wantErr: []string{`refused: it is a symbolic link`}},
		{name: "protected", blocks: []Block{{"loop.toml", "x", "y"}}, wantErr: []string{`edit of "loop.toml" refused: it is protected`}},
		{name: "below a file", blocks: []Block{{"a.go/x", "", "y"}}, wantErr: []string{`its parent "a.go" is a file, not a directory`}},
		{name: "half-matching multi-block", blocks: []Block{{"a.go", "return 1", "return 2"}, {"new.txt", "", "n\n"}, {"a.go", "func B", "func C"}},
			wantErr: []string{`edit of "a.go" failed: block 3: its SEARCH text does not match the file exactly`}},
		{name: "a good edit and a refused one", blocks: []Block{{"a.go", "return 1", "return 2"}, {".loop/x", "", "y"}},
			wantErr: []string{`".loop/x" refused`}},
		{name: "ambiguous", blocks: []Block{{"twice.txt", "x\n", "y\n"}}, wantErr: []string{`block 1: its SEARCH text matches 2 places`}},
		{name: "create over a file", blocks: []Block{{"a.go", "", "package z\n"}}, wantErr: []string{`block 1: an empty SEARCH creates a file, and this one already exists`}},
		{name: "edit a missing file", blocks: []Block{{"nope.go", "x", "y"}}, wantErr: []string{`block 1: the file does not exist`}},
		{name: "every problem is reported", blocks: []Block{{"../x", "", "y"}, {"a.go", "zzz", "y"}},
			wantErr: []string{`"../x" refused`, `"a.go" failed: block 2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, outside := tree(t, start)
			before, beforeOut := contents(t, root), contents(t, outside)
			w, err := workspace.OpenWriter(root)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			written, err := Apply(w, tt.blocks, Options{Refuse: protect})
			after := contents(t, root)
			if diff := cmp.Diff(beforeOut, contents(t, outside)); diff != "" {
				t.Errorf("outside the root changed (-before +after):\n%s", diff)
			}
			if len(tt.wantErr) > 0 {
				for _, want := range tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("error = %v, want it to contain %q", err, want)
					}
				}
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a refused reply changed the root (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.written, written); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
			for p, c := range tt.changed {
				before[p] = c
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyErrorTypes(t *testing.T) {
	t.Parallel()
	root, _ := tree(t, map[string]string{"a": "x\n"})
	w, err := workspace.OpenWriter(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, err = Apply(w, []Block{{".git/config", "", "x"}, {"a", "y", "z"}}, Options{})
	var ref *Refused
	var mis *Mismatch
	if !errors.As(err, &ref) || ref.Path != ".git/config" || !errors.As(err, &mis) || mis.Path != "a" {
		t.Fatalf("error %v: want a *Refused for .git/config and a *Mismatch for a", err)
	}
}
