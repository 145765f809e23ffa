package isolate

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// treeOf returns every file and link of dir (no directories) with its
// content, as readFile shows it, leaving out the node's repository (.git
// at the top).
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p == filepath.Join(dir, ".git") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = readFile(t, dir, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPrepareSeedsCurrentContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"a.txt": "committed", "sub/b.txt": "committed", ".gitignore": "*.log\nbuild/\n",
	})
	git(t, e.root, "init", "-q")
	git(t, e.root, "add", "-A")
	git(t, e.root, "commit", "-qm", "init")
	e.writeRoot("a.txt", "uncommitted edit")
	e.writeRoot("new/untracked.txt", "untracked")
	e.writeRoot("debug.log", "ignored")
	e.writeRoot("build/out", "ignored")
	if err := os.Symlink("sub/b.txt", filepath.Join(e.root, "link")); err != nil {
		t.Fatal(err)
	}
	dir := e.prepare("coder")
	want := map[string]string{
		".gitignore": "*.log\nbuild/\n", "a.txt": "uncommitted edit", "sub/b.txt": "committed",
		"new/untracked.txt": "untracked", "link": "-> sub/b.txt",
	}
	if diff := cmp.Diff(want, treeOf(t, dir)); diff != "" {
		t.Errorf("worktree (-want +got):\n%s", diff)
	}
	if want := filepath.Join(e.root, ".loop", "worktrees", "coder"); dir != want {
		t.Errorf("Prepare = %q, want %q", dir, want)
	}
}

func TestPrepareSyncsRootChangesBetweenIterations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "1", "b": "1", "d/c": "1", "keep": "1"})
	dir := e.prepare("coder")
	e.writeRoot("a", "2")
	e.writeRoot("new/x", "2")
	for _, p := range []string{"b", "d/c"} {
		if err := os.Remove(filepath.Join(e.root, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(e.root, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.m.BeginIteration()
	if again := e.prepare("coder"); again != dir {
		t.Errorf("second Prepare = %q, want the same worktree %q", again, dir)
	}
	want := map[string]string{"a": "2", "new/x": "2", "keep": "1"}
	if diff := cmp.Diff(want, treeOf(t, dir)); diff != "" {
		t.Errorf("worktree (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(filepath.Join(dir, "keep")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("keep: mode change not seeded (%v, %v)", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
		t.Errorf("directory d left empty in the worktree: %v", err)
	}
}

func TestPrepareKeepsNodesUnpublishedWork(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "base", "b": "base", "c": "base"})
	e.prepare("coder")
	e.write("coder", "a", "node's work")
	e.write("coder", "mine", "node's new file")
	if err := os.Remove(filepath.Join(e.dirs["coder"], "c")); err != nil {
		t.Fatal(err)
	}
	e.writeRoot("a", "root moved")
	e.writeRoot("b", "root moved")
	e.writeRoot("c", "root moved")
	e.writeRoot("mine", "root's own")
	e.prepare("coder")
	want := map[string]string{"a": "node's work", "b": "root moved", "mine": "node's new file"}
	if diff := cmp.Diff(want, treeOf(t, e.dirs["coder"])); diff != "" {
		t.Errorf("worktree after re-seed (-want +got):\n%s", diff)
	}
	got := e.publish("coder")
	wantRep := Report{
		Conflicts: []Conflict{{Path: "a", Winner: LoopRoot, Loser: "coder"}, {Path: "mine", Winner: LoopRoot, Loser: "coder"}},
		Deletions: []Change{{Node: "coder", Path: "c", Kind: Deleted}},
	}
	if diff := cmp.Diff(wantRep, got); diff != "" {
		t.Errorf("Publish (-want +got):\n%s", diff)
	}
	if got := e.inRoot("a"); got != "root moved" {
		t.Errorf("root a = %q, want the root's version kept", got)
	}
}

func TestPrepareConvergesWhenBothMadeTheSameChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "base"})
	e.prepare("coder")
	e.write("coder", "a", "same")
	e.writeRoot("a", "same")
	e.prepare("coder")
	if diff := cmp.Diff(Report{}, e.publish("coder")); diff != "" {
		t.Errorf("Publish (-want +got):\n%s", diff)
	}
}

func TestPrepareLeavesFilesThatBecameIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"gen.txt": "generated", "a": "1"})
	e.prepare("coder")
	e.writeRoot(".gitignore", "gen.txt\n")
	e.prepare("coder")
	if got := e.inTree("coder", "gen.txt"); got != "generated" {
		t.Errorf("worktree gen.txt = %q, want it left alone", got)
	}
	e.write("coder", "gen.txt", "regenerated")
	want := Report{}
	if diff := cmp.Diff(want, e.publish("coder")); diff != "" {
		t.Errorf("Publish of an ignored file (-want +got):\n%s", diff)
	}
	if got := e.inRoot("gen.txt"); got != "generated" {
		t.Errorf("root gen.txt = %q", got)
	}
}

func TestPrepareRefusesBadNodeNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, name := range []string{"", ".sync", "..", "a/b", `a\b`} {
		if _, err := e.m.Prepare(t.Context(), name); err == nil {
			t.Errorf("Prepare(%q) succeeded, want an error", name)
		}
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "1"})
	var wg sync.WaitGroup
	for _, node := range []string{"coder", "tester"} {
		wg.Go(func() {
			if _, err := e.m.Prepare(t.Context(), node); err != nil {
				t.Errorf("Prepare(%q): %v", node, err)
			}
		})
	}
	wg.Wait()
	if err := e.m.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.root, ".loop", "worktrees")); !os.IsNotExist(err) {
		t.Errorf(".loop/worktrees after Remove: %v, want it gone", err)
	}
	if e.inRoot("a") != "1" {
		t.Errorf("Remove touched the root")
	}
	dir := e.prepare("coder") // usable again
	if got := e.inTree("coder", "a"); got != "1" || dir == "" {
		t.Errorf("worktree after Remove and Prepare: a = %q", got)
	}
}
