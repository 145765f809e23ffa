package state_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// TestBranchResumeElsewhere runs a loop in one depth-1 clone of a project
// and resumes it in another, as a later CI job on another machine would:
// the second clone's content becomes the first's at the checkpoint, file
// by file, with modes and symbolic links, including a file written by an
// early iteration that no later one touched.
func TestBranchResumeElsewhere(t *testing.T) {
	t.Parallel()
	origin := projectOrigin(t)
	a := cloneDepth1(t, origin)
	storeA, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: a, Branch: "loop-state"})
	if err != nil {
		t.Fatal(err)
	}
	defer storeA.Close()
	iterations := []func(){
		func() { writeFile(t, filepath.Join(a, "notes", "early.txt"), "written by iteration 1 only\n") },
		func() {
			writeFile(t, filepath.Join(a, "src", "main.go"), "package main\n\nfunc main() { println(2) }\n")
			writeExec(t, filepath.Join(a, "scripts", "new-tool.sh"), "#!/bin/sh\necho tool\n")
			mustDo(t, os.Chmod(filepath.Join(a, "scripts", "build.sh"), 0o644))
			mustDo(t, os.Symlink("src/main.go", filepath.Join(a, "latest")))
			writeFile(t, filepath.Join(a, "debug.log"), "ignored: never checkpointed\n")
		},
		func() {
			writeFile(t, filepath.Join(a, "README.md"), "# project\n\nnow with iteration 3\n")
			mustDo(t, os.Remove(filepath.Join(a, "src", "old.go")))
			mustDo(t, os.Remove(filepath.Join(a, "docs", "readme-link")))
			mustDo(t, os.Symlink("../src/main.go", filepath.Join(a, "docs", "readme-link")))
		},
	}
	cp := newCheckpoint("project/main")
	for n, change := range iterations {
		change()
		cp.Iteration = n + 1
		if err := storeA.Save(t.Context(), cp, commitFor(n+1)); err != nil {
			t.Fatal(err)
		}
	}
	wantSnap, err := workspace.NewHasher(a).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	b := cloneDepth1(t, origin)
	headB := gitfake.Git(t, b, "rev-parse", "HEAD")
	storeB, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: b, Branch: "loop-state", Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	defer storeB.Close()
	got, err := storeB.Load(t.Context(), cp.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Iteration != 3 {
		t.Fatalf("Load: iteration %d, want 3", got.Iteration)
	}
	changed, err := storeB.Restore(t.Context(), cp.RunID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Restore changed %d paths", changed)
	if snap, err := workspace.NewHasher(b).Snapshot(t.Context()); err != nil || snap != wantSnap {
		t.Errorf("snapshot of clone B = %s (%v), want clone A's %s", snap, err, wantSnap)
	}
	compareTrees(t, a, b)
	if _, err := os.Lstat(filepath.Join(b, "debug.log")); !os.IsNotExist(err) {
		t.Errorf("debug.log, ignored, reached clone B: %v", err)
	}
	if gitfake.Git(t, b, "rev-parse", "HEAD") != headB {
		t.Error("Restore moved clone B's HEAD")
	}
	gitfake.Git(t, b, "status", "--short") // .git is intact
}

// projectOrigin is a bare repository holding a small project on main.
func projectOrigin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	origin := newBare(t, dir, "origin.git")
	work := filepath.Join(dir, "seed")
	gitfake.Git(t, "", "init", "-q", "-b", "main", work)
	writeFile(t, filepath.Join(work, "README.md"), "# project\n")
	writeFile(t, filepath.Join(work, ".gitignore"), "*.log\n")
	writeFile(t, filepath.Join(work, "src", "main.go"), "package main\n\nfunc main() {}\n")
	writeFile(t, filepath.Join(work, "src", "old.go"), "package main\n")
	writeExec(t, filepath.Join(work, "scripts", "build.sh"), "#!/bin/sh\ngo build ./...\n")
	mustDo(t, os.MkdirAll(filepath.Join(work, "docs"), 0o755))
	mustDo(t, os.Symlink("../README.md", filepath.Join(work, "docs", "readme-link")))
	gitfake.Git(t, work, "add", "-A")
	gitfake.Git(t, work, "commit", "-q", "-m", "project")
	gitfake.Git(t, work, "push", "-q", origin, "main")
	gitfake.Git(t, "", "--git-dir="+origin, "symbolic-ref", "HEAD", "refs/heads/main")
	return origin
}

// cloneDepth1 makes a shallow clone of origin, as actions/checkout does.
func cloneDepth1(t *testing.T, origin string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitfake.Git(t, "", "clone", "-q", "--depth", "1", "file://"+origin, dir)
	return dir
}

// compareTrees compares the checkpointed content of two loop roots path by
// path: kind, execute bit, content and link target.
func compareTrees(t *testing.T, a, b string) {
	t.Helper()
	files, err := workspace.NewHasher(a).Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	filesB, err := workspace.NewHasher(b).Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(files, filesB); diff != "" {
		t.Errorf("files (-A +B):\n%s", diff)
	}
	for _, f := range files {
		if diff := cmp.Diff(describe(t, filepath.Join(a, f)), describe(t, filepath.Join(b, f))); diff != "" {
			t.Errorf("%s (-A +B):\n%s", f, diff)
		}
	}
	for _, must := range []string{"notes/early.txt", "latest", "scripts/new-tool.sh"} {
		if !strings.Contains(strings.Join(files, "\n")+"\n", must+"\n") {
			t.Errorf("%s is not in the checkpoint", must)
		}
	}
}

// describe is what git records of a path.
func describe(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		return err.Error()
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, _ := os.Readlink(p)
		return "link -> " + target
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&0o100 != 0 {
		return "exec: " + string(data)
	}
	return "file: " + string(data)
}

func writeExec(t *testing.T, path, data string) {
	t.Helper()
	writeFile(t, path, data)
	mustDo(t, os.Chmod(path, 0o755))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
