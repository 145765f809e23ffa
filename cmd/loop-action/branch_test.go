package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// branchLoop fixes calc.sh on its third attempt; only the first iteration
// writes early.txt, so a resume elsewhere must restore it from the state
// branch's workspace snapshot.
const branchLoop = `name = "branchy"
[stop]
max_iterations = 6
no_progress = 0
max_wall_clock = "5m"
[providers.script]
command = ["sh", "agent.sh"]
[[node]]
name = "fixer"
provider = "script"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
  [[goal.check]]
  type = "file_exists"
  path = "early.txt"
`

const branchAgent = `cat >/dev/null
sleep "${AGENT_SLEEP:-0}"
if [ "$LOOP_ITERATION" = 1 ]; then echo "written by iteration 1" > early.txt; fi
echo "attempt $LOOP_ITERATION" >> attempts.log
if [ "$LOOP_ITERATION" -ge 3 ]; then
	sed 's/\$1 - \$2/$1 + $2/' calc.sh > calc.tmp && mv calc.tmp calc.sh
fi
`

// originRepo makes a bare origin holding the project on main.
func originRepo(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	origin := filepath.Join(base, "origin.git")
	gitfake.Git(t, base, "init", "-q", "--bare", "-b", "main", origin)
	work := filepath.Join(base, "seed")
	gitfake.Git(t, base, "init", "-q", "-b", "main", work)
	for name, body := range map[string]string{"loop.toml": branchLoop, "agent.sh": branchAgent, ".gitignore": ".loop/\n"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"calc.sh", "test.sh"} {
		b, err := os.ReadFile(filepath.Join("../../examples/quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitfake.Git(t, work, "add", "-A")
	gitfake.Git(t, work, "commit", "-q", "-m", "project")
	gitfake.Git(t, work, "push", "-q", origin, "main")
	return origin
}

// shallowClone makes a depth-1 clone, as actions/checkout does.
func shallowClone(t *testing.T, origin string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitfake.Git(t, filepath.Dir(dir), "clone", "-q", "--depth", "1", "file://"+origin, dir)
	return dir
}

func checkpointsOn(t *testing.T, origin string) int {
	t.Helper()
	cmd := subprocess.ForTest(t, "git", "rev-list", "--count", "loop-state")
	cmd.Dir = origin
	out, err := cmd.Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBranchResumeAfterTheCap: a run stopped by its iteration cap in clone
// A continues from a fresh depth-1 clone B with a raised cap: B gets A's
// workspace back, early.txt included, and the run succeeds.
func TestBranchResumeAfterTheCap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and drives git")
	}
	t.Parallel()
	bin := buildLoopAction(t)
	origin := originRepo(t)
	a := shallowClone(t, origin)
	if code := runLoopAction(t, bin, a, "run", "--state", "branch:loop-state", "--max-iterations", "2"); code != exitUnsuccessful {
		t.Fatalf("run in clone A exited %d, want 1 (iteration-cap)", code)
	}
	b := shallowClone(t, origin)
	if _, err := os.Stat(filepath.Join(b, "early.txt")); err == nil {
		t.Fatal("clone B has early.txt before the resume")
	}
	if code := runLoopAction(t, bin, b, "run", "--state", "branch:loop-state", "--max-iterations", "5"); code != exitSuccess {
		t.Fatalf("run in clone B exited %d, want 0", code)
	}
	if got := readFile(t, filepath.Join(b, "early.txt")); got != "written by iteration 1\n" {
		t.Errorf("early.txt in clone B = %q", got)
	}
	if got := readFile(t, filepath.Join(b, "attempts.log")); got != "attempt 1\nattempt 2\nattempt 3\n" {
		t.Errorf("attempts.log in clone B = %q: the work of clone A was not restored", got)
	}
}

// TestBranchResumeAfterAKill: a run killed in clone A after a few
// checkpoints resumes from a fresh depth-1 clone B and succeeds, with the
// workspace of its last checkpoint.
func TestBranchResumeAfterAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and drives git")
	}
	t.Parallel()
	bin := buildLoopAction(t)
	origin := originRepo(t)
	a := shallowClone(t, origin)
	cmd := loopActionCmd(t, bin, a, "run", "--state", "branch:loop-state")
	cmd.Env = append(cmd.Env, "AGENT_SLEEP=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The deadline is a bound only: each iteration takes about a second.
	deadline := time.Now().Add(runBound)
	for checkpointsOn(t, origin) < 3 { // the baseline and iterations 1 and 2
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no third checkpoint within %v:\n%s", runBound, &out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	waitForOrphans(t, a)

	b := shallowClone(t, origin)
	if code := runLoopAction(t, bin, b, "resume", "--state", "branch:loop-state"); code != exitSuccess {
		t.Fatalf("resume in clone B exited %d, want 0\n%s", code, &out)
	}
	if got := readFile(t, filepath.Join(b, "early.txt")); got != "written by iteration 1\n" {
		t.Errorf("early.txt in clone B = %q", got)
	}
	log := readFile(t, filepath.Join(b, "attempts.log"))
	if !strings.HasPrefix(log, "attempt 1\nattempt 2\n") || !strings.HasSuffix(log, "attempt 3\n") {
		t.Errorf("attempts.log in clone B = %q", log)
	}
	if out := gitfake.Git(t, origin, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Errorf("git fsck: %s", out)
	}
}
