package workspace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/google/go-cmp/cmp"
)

// contents are file bodies with every kind of line ending git tells apart.
var contents = map[string]string{
	"lf": "a\nb\n", "crlf": "a\r\nb\r\n", "mixed": "a\r\nb\nc\r\n", "lonecr": "a\rb\r\n", "none": "abc",
	"binary": "a\x00b\r\n", "empty": "", "ident": "x $Id$ y\n$Id: 0123 $\n", "identcrlf": "$Id$\r\nz\r\n",
	"crcrlf": "a\r\r\nb\n", "eof": "a\r\nb\x1a", "ctrl": "\x01\x02\x03\x04\x05\x06\x07\x0e\x0f\x10\r\n",
	"badid": "$Id: a b $\n$Id:x\n$\n", "dollar": "$I$Id$$Id", "lfonly": "\n\n",
}

// attrLines are .gitattributes lines the generated trees draw from.
var attrLines = []string{
	"*.t text", "*.t -text", "*.a text=auto", "*.c text eol=crlf", "*.l text eol=lf", "*.e eol=crlf",
	"*.i ident", "*.b binary", "*.r crlf", "*.r -crlf", "*.n crlf=input", "*.x text=input",
	"*.ac text=auto eol=crlf", "*.al text=auto eol=lf", "*.q !text", "*.s export-subst",
	"* ident", "* text=auto", "[attr]both text ident", "*.m both",
}

// TestCleanMatchesGit: on generated trees of files with mixed line
// endings, binary files, lone CRs and $Id$ under generated attributes,
// the snapshot is what `git add -A && git write-tree` records: into an
// empty index, and into the index of a commit of an earlier version of
// the files (git's safer autocrlf rule reads it).
func TestCleanMatchesGit(t *testing.T) {
	kinds := make([]string, 0, len(contents))
	for k := range contents {
		kinds = append(kinds, k)
	}
	exts := []string{"t", "a", "c", "l", "e", "i", "b", "r", "n", "x", "ac", "al", "q", "s", "m", "z"}
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 7))
			pick := func(s []string) string { return s[rng.IntN(len(s))] }
			attrs := func() string {
				var b strings.Builder
				if rng.IntN(3) == 0 {
					b.WriteString("\xef\xbb\xbf")
				}
				for range 2 + rng.IntN(5) {
					b.WriteString(pick(attrLines) + "\n")
				}
				return b.String()
			}
			var ops []op
			ops = append(ops, file(".gitattributes", attrs()))
			if rng.IntN(2) == 0 {
				ops = append(ops, file("sub/.gitattributes", attrs()))
			}
			paths := map[string]bool{}
			for range 24 {
				p := fmt.Sprintf("f%d.%s", rng.IntN(30), pick(exts))
				if rng.IntN(2) == 0 {
					p = "sub/" + p
				}
				if !paths[p] {
					paths[p] = true
					ops = append(ops, file(p, contents[pick(kinds)]))
				}
			}
			rewrites := map[string]string{}
			for p := range paths {
				if rng.IntN(2) == 0 {
					rewrites[p] = contents[pick(kinds)]
				}
			}
			checkClean(t, build(t, ops...), rewrites)
		})
	}
	// git's safer autocrlf rule, which a fresh index never shows.
	t.Run("crlf in the index", func(t *testing.T) {
		t.Parallel()
		root := build(t, file("kept.txt", "a\r\nb\r\n"), file("lf.txt", "a\n"))
		checkClean(t, root, map[string]string{".gitattributes": "* text=auto\n", "kept.txt": "c\r\nd\r\n", "lf.txt": "e\r\nf\r\n"})
	})
}

// checkClean compares the snapshot of root with git's, into an empty
// index, then, after a commit and the rewrites, into the commit's index.
func checkClean(t *testing.T, root string, rewrites map[string]string) {
	t.Helper()
	want, _ := oracle(t, root)
	got, err := NewHasherWith(root, Checkout{Base: NoBase}).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Snapshot(want), got); diff != "" {
		t.Errorf("into an empty index (-git +ours):\n%s", diff)
	}
	bare := filepath.Join(t.TempDir(), "objects.git")
	store, err := git.PlainInit(bare, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = NewHasherWith(root, Checkout{Base: NoBase}).WriteObjects(t.Context(), store.Storer); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Snapshot(want), got); diff != "" {
		t.Errorf("WriteObjects into an empty index (-git +ours):\n%s", diff)
	}
	fsckTree(t, bare, string(got))
	repo, gitDir := commitAll(t, root)
	for p, content := range rewrites {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want = addAll(t, root, gitDir)
	got, err = NewHasherWith(root, Checkout{Base: headBase(t, repo)}).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Snapshot(want), got); diff != "" {
		t.Errorf("into the index of a commit (-git +ours):\n%s", diff)
	}
}

// commitAll commits root's files into a git directory of their own and
// opens it.
func commitAll(t *testing.T, root string) (*git.Repository, string) {
	t.Helper()
	gitDir := filepath.Join(t.TempDir(), "base.git")
	runGit(t, "", "init", "-q", "--bare", gitDir)
	args := []string{"--git-dir=" + gitDir, "--work-tree=" + root}
	runGit(t, root, append(args, "add", "-A")...)
	runGit(t, root, append(args, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")...)
	repo, err := git.PlainOpen(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, gitDir
}

// headBase is the Base of repo's HEAD commit.
func headBase(t *testing.T, repo *git.Repository) Base {
	t.Helper()
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	return TreeBase(repo.Storer, c.TreeHash)
}

// addAll is `git add -A && git write-tree` in root with the git
// directory gitDir.
func addAll(t *testing.T, root, gitDir string) string {
	t.Helper()
	args := []string{"--git-dir=" + gitDir, "--work-tree=" + root}
	runGit(t, root, append(args, "add", "-A")...)
	return strings.TrimSpace(runGit(t, root, append(args, "write-tree")...))
}
