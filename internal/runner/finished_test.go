package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// fixLoop fixes calc.txt and writes its result under out/, which the
// success export carries.
const fixLoop = `name = "fix"
[stop]
max_iterations = 2
[providers.script]
command = ["sh", "-c", "cat >/dev/null; echo fixed > calc.txt; mkdir -p out; echo 'fixed by iteration 1' > out/result.txt"]
[[node]]
name = "fixer"
provider = "script"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "grep -q fixed calc.txt"
[export]
paths = ["out/**"]
`

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runOnBranch runs the loop in root with the branch: store on origin.
func runOnBranch(t *testing.T, root, origin string) (Outcome, []ledger.Event) {
	t.Helper()
	cfg, err := loop.Parse("loop.toml", []byte(fixLoop))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenBranch(context.Background(), state.BranchOptions{Root: root, Branch: "loop-state", Remote: origin})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var evs recorded
	out, err := Run(context.Background(), Options{Config: cfg, Root: root, RunID: "fix/pr-1", Store: store,
		Env: []string{"PATH=" + os.Getenv("PATH")}, Progress: &evs})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out, evs
}

type recorded []ledger.Event

func (r *recorded) Event(e ledger.Event) { *r = append(*r, e) }

// TestFinishedRunExportFromItsWorkspace: a run succeeds on a branch: store
// in one checkout; the next event's job, a fresh checkout that holds the
// files the run started from and no export, writes the export from the
// certified workspace (restored) and leaves the state branch's workspace
// as the run left it.
func TestFinishedRunExportFromItsWorkspace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	origin := filepath.Join(base, "origin.git")
	gitIn(t, base, "init", "-q", "--bare", "-b", "main", origin)
	seed := filepath.Join(base, "seed")
	gitIn(t, base, "init", "-q", "-b", "main", seed)
	mustWrite(t, filepath.Join(seed, "calc.txt"), "bug\n")
	mustWrite(t, filepath.Join(seed, ".gitignore"), ".loop/\n")
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-q", "-m", "project")
	gitIn(t, seed, "push", "-q", origin, "main")

	first := filepath.Join(base, "job1")
	gitIn(t, base, "clone", "-q", "--depth", "1", "file://"+origin, first)
	if out, _ := runOnBranch(t, first, origin); out.Status != state.Success || out.ExportPath == "" {
		t.Fatalf("first job: %s, export %q", out.Status, out.ExportPath)
	}

	second := filepath.Join(base, "job2")
	gitIn(t, base, "clone", "-q", "--depth", "1", "file://"+origin, second)
	out, evs := runOnBranch(t, second, origin)
	if out.Status != state.Success || out.Ran || out.ExportPath == "" {
		t.Fatalf("second job: %s, ran %v, export %q", out.Status, out.Ran, out.ExportPath)
	}
	if got := gitIn(t, origin, "show", "loop-state:runs/fix/pr-1/workspace/calc.txt"); got != "fixed\n" {
		t.Errorf("the state branch's workspace holds calc.txt %q, want the fixed file", got)
	}
	stored := gitIn(t, origin, "show", "loop-state:runs/fix/pr-1/workspace/out/result.txt")
	b, err := os.ReadFile(filepath.Join(out.ExportPath, "out", "result.txt"))
	if err != nil || string(b) != stored {
		t.Errorf("the export's out/result.txt = %q (%v), want %q as stored", b, err, stored)
	}
	if count(evs, ledger.WorkspaceRestored, "") != 1 || count(evs, ledger.ExportWritten, "") != 1 {
		t.Errorf("events of the second job: %v", evs)
	}
}

// TestFinishedRunExportRefusesAChangedRoot: with a store that keeps no
// workspace, an export of a finished run is only written while the root
// still is the certified snapshot.
func TestFinishedRunExportRefusesAChangedRoot(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fixLoop, nil)
	h.opts.Env = []string{"PATH=" + os.Getenv("PATH")}
	mustWrite(t, filepath.Join(h.root, "calc.txt"), "bug\n")
	out := h.run(context.Background())
	if out.Status != state.Success {
		t.Fatalf("status %s", out.Status)
	}
	if err := os.RemoveAll(out.ExportPath); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(h.root, "out", "result.txt"), "edited since\n")
	if _, err := Run(context.Background(), h.opts); err == nil || !strings.Contains(err.Error(), "which the gate certified") {
		t.Fatalf("Run = %v, want a refusal naming the certified snapshot", err)
	}
	mustWrite(t, filepath.Join(h.root, "out", "result.txt"), "fixed by iteration 1\n")
	out = h.run(context.Background())
	if b, err := os.ReadFile(filepath.Join(out.ExportPath, "out", "result.txt")); err != nil || string(b) != "fixed by iteration 1\n" {
		t.Errorf("export out/result.txt = %q, %v", b, err)
	}
}
