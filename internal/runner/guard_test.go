package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// scripted is a loop whose builder and judge are sh scripts, run as real
// processes by the command provider; %s are the builder's and the judge's
// scripts (TOML literal strings: no single quotes).
const scripted = `name = "scripted"
[stop]
max_iterations = 1
[protect]
paths = ["checks/**"]
[providers.a]
command = ["sh", "-c", '%s']
[providers.b]
command = ["sh", "-c", '%s']
[[node]]
name = "fixer"
provider = "a"
goals = ["g"]
[[node]]
name = "review"
role = "judge"
provider = "b"
after = ["fixer"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "sh checks/run.sh"
  [[goal.check]]
  type = "judge"
  node = "review"
`

const verdictPass = `echo "{\"verdict\":\"pass\",\"evidence\":\"looked\",\"score\":10}"`

func scriptedHarness(t *testing.T, builder, judge string) *harness {
	t.Helper()
	h := newHarness(t, fmt.Sprintf(scripted, builder, judge), nil)
	h.opts.Env = os.Environ()
	if err := os.MkdirAll(filepath.Join(h.root, "checks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.root, "checks", "run.sh"), []byte("exit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestJudgesCannotChangeGuardedPaths: a judge's wave is guarded like a
// builder's. A judge that rewrites the protected check script and plants
// a hook has both put back, and the wave counts as a node failure.
func TestJudgesCannotChangeGuardedPaths(t *testing.T) {
	t.Parallel()
	judge := `cat >/dev/null; printf "exit 0\n" >checks/run.sh; mkdir -p .git/hooks; echo evil >.git/hooks/pre-commit; ` + verdictPass
	h := scriptedHarness(t, "cat >/dev/null", judge)
	if err := os.Mkdir(filepath.Join(h.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := h.run(context.Background())
	if out.Success {
		t.Fatal("the judge's rewrite of the check made the run succeed")
	}
	if b, _ := os.ReadFile(filepath.Join(h.root, "checks", "run.sh")); string(b) != "exit 1\n" {
		t.Errorf("checks/run.sh = %q, want it put back", b)
	}
	if _, err := os.Lstat(filepath.Join(h.root, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the judge's hook is still there")
	}
	var lines []string
	for _, e := range h.events() {
		if e.Type == ledger.ProtectedReverted || e.Type == ledger.GitReverted {
			lines = append(lines, e.Line())
		}
	}
	want := "git path .git/hooks reverted (created; changed by review)\n" +
		"git path .git/hooks/pre-commit reverted (created; changed by review)\n" +
		"protected path checks/run.sh reverted (modified; changed by review)"
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("reverts:\n%s\nwant:\n%s", got, want)
	}
	if out.Iteration != 1 {
		t.Errorf("iterations = %d, want 1", out.Iteration)
	}
}

// TestGitDirReplacedByAPointerIsPutBack: a builder moves .git away and
// leaves a gitdir: pointer to a repository of its own in its place. .git
// becomes a directory again with its configuration, and the pointer's
// target is never written.
func TestGitDirReplacedByAPointerIsPutBack(t *testing.T) {
	t.Parallel()
	builder := `cat >/dev/null; mv .git "$MOVED/repo"; printf "gitdir: %s\n" "$MOVED/repo" >.git`
	h := scriptedHarness(t, builder, "cat >/dev/null; "+verdictPass)
	moved := t.TempDir()
	h.opts.Env = append(h.opts.Env, "MOVED="+moved)
	gitRepo(t, h.root, "core.fsmonitor", "false")
	config, err := os.ReadFile(filepath.Join(h.root, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	h.run(context.Background())
	got, err := os.ReadFile(filepath.Join(h.root, ".git", "config"))
	if err != nil || string(got) != string(config) {
		t.Errorf(".git/config = %q, %v; want it put back", got, err)
	}
	var reason string
	for _, e := range h.events() {
		if e.Type == ledger.GitReverted && e.Path == ".git" {
			reason = e.Reason
		}
	}
	if reason != "replaced by a file" {
		t.Errorf("the ledger says .git was %q, want \"replaced by a file\"", reason)
	}
}

// TestSameSizeSameMtimeRewritesArePutBack: the scans of the guarded paths
// reuse what they read of a file whose stat did not change
// (workspace.ScanCache). An agent that rewrites .git/config and a
// protected check in place, keeping their size, inode and mtime
// (testdata/agents/samesize.sh), still changes their ctime: both are put
// back. The files are an hour old, so the cache vouches for them.
func TestSameSizeSameMtimeRewritesArePutBack(t *testing.T) {
	t.Parallel()
	agent, err := filepath.Abs("../../testdata/agents/samesize.sh")
	if err != nil {
		t.Fatal(err)
	}
	h := scriptedHarness(t, "sh "+agent, "cat >/dev/null; "+verdictPass)
	gitRepo(t, h.root)
	run := filepath.Join(h.root, "checks", "run.sh")
	if err := os.WriteFile(run, []byte("#!/bin/sh\n# the real checks\nexit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(h.root, ".git", "config")
	want := map[string]string{}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{run, config} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[p] = string(b)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	out := h.run(context.Background())
	if out.Success {
		t.Fatal("the rewritten check made the run succeed")
	}
	for p, w := range want {
		if b, _ := os.ReadFile(p); string(b) != w {
			t.Errorf("%s = %q, want it put back to %q", p, b, w)
		}
	}
	var reverted []string
	for _, e := range h.events() {
		if e.Type == ledger.ProtectedReverted || e.Type == ledger.GitReverted {
			reverted = append(reverted, e.Path)
		}
	}
	if diff := cmp.Diff([]string{".git/config", "checks/run.sh"}, reverted); diff != "" {
		t.Errorf("paths reverted (-want +got):\n%s", diff)
	}
}

// oneBuilder is a loop of one iteration whose one builder is the Go
// provider "a" and whose one goal has the command checks runs, with
// checks/** protected.
func oneBuilder(runs ...string) string {
	var b strings.Builder
	b.WriteString("name = \"one\"\n[stop]\nmax_iterations = 1\n[protect]\npaths = [\"checks/**\"]\n")
	b.WriteString("[providers.a]\ncommand = [\"a\"]\n[[node]]\nname = \"fixer\"\nprovider = \"a\"\ngoals = [\"g\"]\n")
	b.WriteString("[[goal]]\nname = \"g\"\n")
	for _, run := range runs {
		fmt.Fprintf(&b, "  [[goal.check]]\n  type = \"test\"\n  run = %q\n", run)
	}
	return b.String()
}

// TestGuardedPathRewrittenBeforeTheMeasurementIsPutBack: what a process
// left behind writes to a guarded path after the wave's guard and before
// the sweep that starts the measurement kills it (here: written when the
// wave's last phase ends) is a change during the measurement: the
// measurement starts from what the wave's guard left (not from a new
// scan, which would take the rewrite for the baseline and run it), so
// the rewrite is put back and the measurement is void. Whether or not the
// builder itself rewrote the file, which the wave's guard put back.
func TestGuardedPathRewrittenBeforeTheMeasurementIsPutBack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		builder fake
		want    []string
	}{
		{"idle builder", idle(0), []string{
			"protected path checks/run.sh reverted (modified while the evidence was collected)"}},
		{"builder rewrites it too", touch("checks/run.sh", 0), []string{
			"protected path checks/run.sh reverted (modified; changed by fixer)",
			"protected path checks/run.sh reverted (modified while the evidence was collected)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, oneBuilder("sh checks/run.sh"), map[string]Provider{"a": c.builder})
			h.opts.Env = os.Environ()
			run := filepath.Join(h.root, "checks", "run.sh")
			mustWrite(t, run, "exit 1\n")
			h.onStep(func(step string) {
				if step == "published" { // the wave's last step, after its guard
					mustWrite(t, run, "exit 0\n")
				}
			})
			if out := h.run(context.Background()); out.Success {
				t.Error("the rewrite made after the wave's guard made the run succeed")
			}
			if b, _ := os.ReadFile(run); string(b) != "exit 1\n" {
				t.Errorf("checks/run.sh = %q, want it put back", b)
			}
			var lines []string
			void := 0
			for _, e := range h.events() {
				switch e.Type {
				case ledger.ProtectedReverted:
					lines = append(lines, e.Line())
				case ledger.MeasurementVoid:
					void++
				}
			}
			if diff := cmp.Diff(c.want, lines); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
			if void != 1 {
				t.Errorf("%d void measurements, want 1", void)
			}
		})
	}
}

// TestCheckRewritingAGuardedPathVoidsTheMeasurement: the guarded paths
// are scanned once the checks have ended (beside the snapshot): a check
// that rewrites a protected file is seen, the file is put back and every
// measurement is void, the baseline's and the iteration's.
func TestCheckRewritingAGuardedPathVoidsTheMeasurement(t *testing.T) {
	t.Parallel()
	// The first check rewrites the protected checks/run.sh, the second runs it.
	h := newHarness(t, oneBuilder(`printf 'exit 0\n' >checks/run.sh`, "sh checks/run.sh"), map[string]Provider{"a": idle(0)})
	h.opts.Env = os.Environ()
	run := filepath.Join(h.root, "checks", "run.sh")
	mustWrite(t, run, "exit 1\n")
	if out := h.run(context.Background()); out.Success {
		t.Error("the check's rewrite made the run succeed")
	}
	if b, _ := os.ReadFile(run); string(b) != "exit 1\n" {
		t.Errorf("checks/run.sh = %q, want it put back", b)
	}
	var lines []string
	for _, e := range h.events() {
		if e.Type == ledger.ProtectedReverted || e.Type == ledger.MeasurementVoid {
			lines = append(lines, fmt.Sprintf("%d %s", e.Iteration, e.Type))
		}
	}
	want := []string{"0 " + string(ledger.ProtectedReverted), "0 " + string(ledger.MeasurementVoid),
		"1 " + string(ledger.ProtectedReverted), "1 " + string(ledger.MeasurementVoid)}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("reverts and voids (-want +got):\n%s", diff)
	}
}

// TestUserEditOfAnIgnoredProtectedFileVoidsNothing: a protected file that is
// also ignored, which the user edits between two iterations, is removed
// by the ignored-file scrub before the next measurement (it changed since
// the session started). That removal is the runner's own, and is the
// measurement's baseline: the guard after the measurement must not put
// the edit back, which the next scrub would remove again, voiding every
// measurement from then on.
func TestUserEditOfAnIgnoredProtectedFileVoidsNothing(t *testing.T) {
	t.Parallel()
	cfg := strings.Replace(oneBuilder("false"), "max_iterations = 1", "max_iterations = 4\nno_progress = 0", 1)
	h := newHarness(t, cfg, map[string]Provider{"a": idle(0)})
	mustWrite(t, filepath.Join(h.root, ".gitignore"), "checks/local.cfg\n")
	local := filepath.Join(h.root, "checks", "local.cfg")
	mustWrite(t, local, "v1\n")
	h.opts.Checkpointed = func(cp *state.Checkpoint) {
		if cp.Iteration == 1 {
			mustWrite(t, local, "v2\n") // the user, between two iterations
		}
	}
	h.run(context.Background())
	void := map[int]bool{}
	for _, e := range h.events() {
		if e.Type == ledger.MeasurementVoid {
			void[e.Iteration] = true
		}
	}
	if len(void) > 0 {
		t.Errorf("measurements void in iterations %v: the scrub's removal was put back and removed again", void)
	}
	if _, err := os.Stat(local); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("checks/local.cfg after the run: %v; want it removed as an ignored file changed since the session started", err)
	}
}
