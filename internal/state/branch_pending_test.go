package state_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// TestBranchResumesAfterUnwrittenObjects: a process that pushed its
// checkpoints but died before writing their objects to the local state
// repository (a save's objects are written after it returns) leaves a
// repository the next process on the machine loads, resumes, saves and
// restores from: every object in it is whole (git fsck), and what it
// lacks comes from the remote. The dead process is played by a Branch
// whose writer stops after the first save's objects.
func TestBranchResumesAfterUnwrittenObjects(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	root, cache := t.TempDir(), t.TempDir()
	dead := openBranch(t, bare, root, cache)
	cp := newCheckpoint("loop/main")
	var ledger, log string
	save := func(b *state.Branch, n int) {
		t.Helper()
		writeFile(t, filepath.Join(root, "src", "work.txt"), strings.Repeat("x", n)+"\n")
		cp.Iteration = n
		c := commitFor(n)
		if err := b.Save(t.Context(), cp, c); err != nil {
			t.Fatal(err)
		}
		ledger, log = ledger+string(c.Ledger), log+string(c.Log)
	}
	save(dead, 1)
	state.StopWriting(dead)
	save(dead, 2)
	save(dead, 3)
	head := strings.TrimSpace(gitfake.Git(t, "", "--git-dir="+bare, "rev-parse", "loop-state"))
	if subprocess.ForTest(t, "git", "--git-dir="+cache, "cat-file", "-e", head).Run() == nil {
		t.Fatal("the local repository holds the head: the test proves nothing")
	}
	checkWhole(t, cache)

	next := openBranch(t, bare, root, cache) // the dead one is never closed
	got, err := next.Load(t.Context(), "loop/main")
	if err != nil || got.Iteration != 3 {
		t.Fatalf("Load after the crash = %+v, %v; want iteration 3", got, err)
	}
	checkCommitted(t, next, "loop/main", ledger, log)
	if err := os.RemoveAll(filepath.Join(root, "src")); err != nil {
		t.Fatal(err)
	}
	if _, err := next.Restore(t.Context(), "loop/main"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(root, "src", "work.txt")); err != nil || string(data) != "xxx\n" {
		t.Fatalf("restored work.txt = %q, %v; want iteration 3's", data, err)
	}
	save(next, 4)
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	head = strings.TrimSpace(gitfake.Git(t, "", "--git-dir="+bare, "rev-parse", "loop-state"))
	if err := subprocess.ForTest(t, "git", "--git-dir="+cache, "cat-file", "-e", head).Run(); err != nil {
		t.Errorf("Close left the head %s unwritten in the local repository: %v", head, err)
	}
	checkWhole(t, cache)
	last := openBranch(t, bare, t.TempDir(), cache)
	if got, err := last.Load(t.Context(), "loop/main"); err != nil || got.Iteration != 4 {
		t.Fatalf("Load after the resumed save = %+v, %v; want iteration 4", got, err)
	}
	checkCommitted(t, last, "loop/main", ledger, log)
	gitfake.Fsck(t, bare)
}

// checkWhole fails the test unless every commit and tree in the repository
// at gitDir names only objects it holds (git fsck checks only what its
// refs reach, and a local state repository has none).
func checkWhole(t *testing.T, gitDir string) {
	t.Helper()
	var roots []string
	for line := range strings.Lines(gitfake.Git(t, "", "--git-dir="+gitDir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")) {
		id, kind, _ := strings.Cut(strings.TrimSpace(line), " ")
		if kind == "commit" || kind == "tree" {
			roots = append(roots, id)
		}
	}
	cmd := subprocess.ForTest(t, "git", "--git-dir="+gitDir, "rev-list", "--objects", "--no-walk", "--missing=print", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(roots, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git rev-list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "?") {
			t.Errorf("the local repository lacks %s, named by an object it holds", strings.TrimSpace(line[1:]))
		}
	}
}
