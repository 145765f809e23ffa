//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// TestOpenRepoLinkedWorktreeNeverBlocks: a root that is a linked
// worktree (.git a gitdir: file, its git directory a commondir pointing
// at the main repository's) is opened with both directories named, and
// a named pipe an agent put in place of the HEAD commit's object in the
// common directory fails the read at once; go-git's plain open, which
// the .git file once fell back to, waited on it.
func TestOpenRepoLinkedWorktreeNeverBlocks(t *testing.T) {
	t.Parallel()
	main := build(t, file("a.txt", "a\n"))
	runGit(t, main, "init", "-q")
	runGit(t, main, "add", "-A")
	runGit(t, main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
	linked := filepath.Join(t.TempDir(), "linked")
	runGit(t, main, "worktree", "add", "-q", "-b", "side", linked)
	repo, err := OpenRepo(linked)
	if err != nil {
		t.Fatal(err)
	}
	common, _ := filepath.EvalSymlinks(filepath.Join(main, ".git"))
	if got, _ := filepath.EvalSymlinks(repo.Common); got != common {
		t.Errorf("Common = %q, want %q", repo.Common, common)
	}
	if got := filepath.Dir(repo.GitDir); filepath.Base(got) != "worktrees" {
		t.Errorf("GitDir = %q, want the main repository's worktrees/linked", repo.GitDir)
	}
	head, err := repo.Head()
	if err != nil || head.Name() != plumbing.ReferenceName("refs/heads/side") {
		t.Fatalf("Head() = %v, %v; want refs/heads/side", head, err)
	}
	id := head.Hash().String()
	obj := filepath.Join(main, ".git", "objects", id[:2], id[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(obj, 0o644); err != nil {
		t.Fatal(err)
	}
	returns(t, func() {
		if repo, err := OpenRepo(linked); err == nil {
			_, err = repo.CommitObject(head.Hash())
			if err == nil {
				t.Errorf("reading a commit that is a named pipe succeeded")
			}
		}
	}, obj)
}

// TestOpenRepoListsNeverBlock: a named pipe an agent put in place of a
// directory go-git lists (objects/pack, refs/heads) fails the read at
// once. nonBlocking leaves ReadDir to billy, whose os.ReadDir opens with
// O_DIRECTORY (ENOTDIR before any wait); this holds it to that.
func TestOpenRepoListsNeverBlock(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"objects/pack", "refs/heads"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			root := build(t, file("a.txt", "a\n"))
			runGit(t, root, "init", "-q")
			runGit(t, root, "add", "-A")
			runGit(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
			runGit(t, root, "gc", "-q")
			repo, err := OpenRepo(root)
			if err != nil {
				t.Fatal(err)
			}
			head, err := repo.Head()
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, ".git", filepath.FromSlash(dir))
			must(t, os.RemoveAll(p))
			must(t, syscall.Mkfifo(p, 0o644))
			returns(t, func() {
				repo, err := OpenRepo(root)
				if err != nil {
					return
				}
				if dir == "objects/pack" {
					_, err = repo.CommitObject(head.Hash())
				} else {
					_, err = repo.Branches()
				}
				if err == nil {
					t.Errorf("reading through a %s that is a named pipe succeeded", dir)
				}
			}, p)
		})
	}
}

// TestOpenRepoRefuses: a root whose .git is a link, a FIFO, or a file
// with no gitdir: line has no repository OpenRepo opens, and a commondir
// that is a pipe is refused without waiting on it.
func TestOpenRepoRefuses(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(t *testing.T, root string){
		"link": func(t *testing.T, root string) {
			other := t.TempDir()
			runGit(t, other, "init", "-q")
			must(t, os.Symlink(filepath.Join(other, ".git"), filepath.Join(root, ".git")))
		},
		"fifo":      func(t *testing.T, root string) { must(t, syscall.Mkfifo(filepath.Join(root, ".git"), 0o644)) },
		"no gitdir": func(t *testing.T, root string) { file(".git", "not a pointer\n")(t, root) },
		"commondir fifo": func(t *testing.T, root string) {
			runGit(t, root, "init", "-q")
			must(t, syscall.Mkfifo(filepath.Join(root, ".git", "commondir"), 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			setup(t, root)
			var err error
			returns(t, func() { _, err = OpenRepo(root) }, filepath.Join(root, ".git"), filepath.Join(root, ".git", "commondir"))
			want := git.ErrRepositoryNotExists
			if name == "commondir fifo" {
				want = ErrNotRegular
			}
			if !errors.Is(err, want) {
				t.Errorf("OpenRepo = %v, want %v", err, want)
			}
		})
	}
}

// TestReadGitFile reads a small regular file, nothing for an absent one,
// and refuses a link, a pipe (at once) and a file over 1 MiB.
func TestReadGitFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	must(t, os.WriteFile(p("HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(t, os.Symlink(p("HEAD"), p("link")))
	must(t, syscall.Mkfifo(p("fifo"), 0o644))
	must(t, os.WriteFile(p("big"), []byte(strings.Repeat("x", maxGitFile+1)), 0o644))
	if b, err := ReadGitFile(p("HEAD")); err != nil || string(b) != "ref: refs/heads/main\n" {
		t.Errorf("ReadGitFile(HEAD) = %q, %v", b, err)
	}
	if b, err := ReadGitFile(p("absent")); err != nil || b != nil {
		t.Errorf("ReadGitFile(absent) = %q, %v; want nil, nil", b, err)
	}
	for _, name := range []string{"link", "fifo"} {
		var err error
		returns(t, func() { _, err = ReadGitFile(p(name)) }, p(name))
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadGitFile(%s) = %v, want ErrNotRegular", name, err)
		}
	}
	if _, err := ReadGitFile(p("big")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadGitFile(big) = %v, want ErrTooLarge", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
