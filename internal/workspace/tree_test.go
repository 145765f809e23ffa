package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"
)

// treeCases are commits whose TreeHasher snapshot must equal the snapshot
// of a fresh checkout of them.
var treeCases = []struct {
	name    string
	ops     []op
	force   []string // paths committed although ignored (git add -f)
	exclude string   // the loop root's .git/info/exclude
	extra   []string // git commands run before the commit (update-index ...)
}{
	{name: "plain files", ops: []op{file("a", "a\n"), file("d/b", "b\n"), file("a b", "space\n")}},
	{name: "ignored files tracked", ops: []op{
		file(".gitignore", "*.log\nbuild/\n"), file("keep.go", "k\n"), file("x.log", "tracked but ignored\n"),
		file("build/out", "tracked in an ignored dir\n"), file("sub/y.log", "y\n"),
	}, force: []string{"x.log", "build/out", "sub/y.log"}},
	{name: "nested gitignore with negation", ops: []op{
		file(".gitignore", "*.tmp\n!keep.tmp\n"), file("a.tmp", "i\n"), file("keep.tmp", "k\n"),
		file("sub/.gitignore", "!*.tmp\nlocal/\n"), file("sub/b.tmp", "re-included\n"),
		file("sub/local/x", "ignored\n"), file("local/x", "kept\n"),
		file("sub/deep/.gitignore", "*.txt\n!keep.txt\n"), file("sub/deep/a.txt", "i\n"), file("sub/deep/keep.txt", "k\n"),
	}, force: []string{"a.tmp", "sub/local/x", "sub/deep/a.txt"}},
	{name: "symlinks", ops: []op{
		file("target", "t\n"), link("to-target", "target"), link("dangling", "nope"),
		link("outside", "../../etc/passwd"), link("d/up", "../target"),
	}},
	{name: "a symbolic link named gitignore is no ignore file", ops: []op{
		file("rules", "*.x\n"), link(".gitignore", "rules"), file("a.x", "kept\n"),
	}},
	{name: "exec bits", ops: []op{
		fileMode("run.sh", "#!/bin/sh\n", 0o755), file("plain", "p\n"), fileMode("bin/tool", "t\n", 0o755),
		fileMode(".gitignore", "*.o\n", 0o755), file("x.o", "ignored by an executable .gitignore\n"),
	}, force: []string{"x.o"}},
	{name: "loop committed", ops: []op{
		file(".loop/state/x", "committed state\n"), file("sub/.loop/y", "only the top .loop is ours\n"), file("a", "a\n"),
	}},
	{name: "info exclude of the root", ops: []op{
		file("a.secret", "s\n"), file("b", "b\n"), file("d/c.secret", "c\n"),
	}, exclude: "*.secret\n"},
	{name: "only ignored in a directory", ops: []op{
		file(".gitignore", "*.gen\n"), file("gen/a.gen", "g\n"), file("gen/b.gen", "g\n"), file("top", "t\n"),
	}, force: []string{"gen/a.gen", "gen/b.gen"}},
	{name: "submodule", ops: []op{file("a", "a\n")},
		extra: []string{"update-index --add --cacheinfo 160000,0123456789abcdef0123456789abcdef01234567,sub"}},
}

func TestTreeHasherMatchesCheckout(t *testing.T) {
	for _, tc := range treeCases {
		t.Run(tc.name, func(t *testing.T) {
			repo := build(t, tc.ops...)
			runGit(t, repo, "init", "-q")
			if tc.exclude != "" {
				if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte(tc.exclude), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			runGit(t, repo, "add", "-A")
			for _, p := range tc.force {
				runGit(t, repo, "add", "-f", p)
			}
			for _, c := range tc.extra {
				runGit(t, repo, strings.Fields(c)...)
			}
			runGit(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "c")
			tree := strings.TrimSpace(runGit(t, repo, "rev-parse", "HEAD^{tree}"))

			checkout := filepath.Join(t.TempDir(), "co")
			runGit(t, "", "clone", "-q", repo, checkout)
			if err := os.WriteFile(filepath.Join(checkout, ".git", "info", "exclude"), []byte(tc.exclude), 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := NewHasher(checkout).Snapshot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			r, err := git.PlainOpen(repo)
			if err != nil {
				t.Fatal(err)
			}
			th, err := NewTreeHasher(repo, r.Storer)
			if err != nil {
				t.Fatal(err)
			}
			got, err := th.Snapshot(t.Context(), plumbing.NewHash(tree))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TreeHasher.Snapshot mismatch (-checkout +tree):\n%s", diff)
			}
			if _, err := r.Storer.EncodedObject(plumbing.TreeObject, plumbing.NewHash(string(got))); err != nil {
				t.Errorf("the snapshot's tree is not stored: %v", err)
			}
		})
	}
}
