package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

func TestForkPullRequestIsGateOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	w := newWorld(t)
	w.gh.AddPull(owner, repo, githubfake.Pull{Number: 8, HeadSHA: w.headSHA, HeadRef: "patch-1", HeadRepo: "stranger/demo", BaseRef: "main", BaseSHA: w.baseSHA})
	d := w.jobDirs("feature")
	code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_fork", nil), nil)
	if code != exitFailed {
		t.Fatalf("a fork's failing gate exited %d, want 1\n%s", code, log)
	}
	summary, _ := os.ReadFile(filepath.Join(d.commands, "step_summary"))
	if !strings.Contains(string(summary), "comes from a fork") || !strings.Contains(string(summary), "`sh test.sh` exited 1") {
		t.Errorf("summary of a fork PR:\n%s", summary)
	}
	if n := len(w.gh.Comments(owner, repo, 8)); n != 0 {
		t.Errorf("a fork PR got %d comments", n)
	}
	if strings.Contains(log, "fixer dispatched") {
		t.Error("an agent ran on a fork's code")
	}
	if out, err := w.gitOut(w.origin, "branch", "--list", "loop-state"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("a fork PR wrote the state branch: %q %v", out, err)
	}
}

func TestDroppedCommandIsRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	w := newWorld(t)
	d := w.jobDirs("feature")
	if code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), nil); code != exitOK {
		t.Fatalf("PR event: %d\n%s", code, log)
	}
	// The approval's own job was dropped by the concurrency group; the next
	// comment's job finds it.
	approve := w.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve")
	status := w.gh.AddComment(owner, repo, 7, "reader", "User", "/loop status")
	d = w.jobDirs("feature")
	code, log := inProcess(t, w, d, "issue_comment", w.event(d.workflow, "issue_comment_created", map[string]string{"body": "/loop status", "user": "reader", "id": itoa(status)}), nil)
	if !w.certified(code, outputs(t, d.commands)) {
		t.Fatalf("comment job: %d, want the run to succeed\n%s", code, log)
	}
	if got := sorted(w.gh.Reactions(owner, repo, approve)); strings.Join(got, ",") != "+1,eyes" {
		t.Errorf("the dropped approval got reactions %v", got)
	}
	if out := outputs(t, d.commands); out["stop-reason"] != "success" {
		t.Errorf("the recovered approval did not finish the loop: %v\n%s", out, log)
	}
}

func TestScheduledRunAndLowerOnlyInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	w := newWorld(t)
	d := w.jobDirs("main")
	code, log := inProcess(t, w, d, "schedule", w.event(d.workflow, "schedule", nil), map[string]string{"INPUT_MAX-ITERATIONS": "9"})
	if code != exitOK {
		t.Fatalf("schedule: %d\n%s", code, log)
	}
	out := outputs(t, d.commands)
	if out["run-id"] != "demo/main" || out["stop-reason"] != "awaiting-review" {
		t.Errorf("outputs: %v", out)
	}
	if !strings.Contains(log, "input max-iterations 9 is above stop.max_iterations 3") {
		t.Errorf("raising the cap through an input was not refused:\n%s", log)
	}
}

func TestConfigErrorsAnnotateTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	w := newWorld(t)
	w.gh.AddFile(owner, repo, w.baseSHA, ".github/loop.toml", []byte("name = \"demo\"\n[stop]\nmax_iterations = 0\n"))
	d := w.jobDirs("feature")
	code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), nil)
	if code != exitConfig {
		t.Fatalf("exit %d, want 2\n%s", code, log)
	}
	want := "::error col=1,file=.github/loop.toml,line=3,title=loop config::stop.max_iterations must be at least 1, not 0"
	if !strings.Contains(log, want) {
		t.Errorf("no annotation %q in:\n%s", want, log)
	}
}

func (w *world) gitOut(dir string, args ...string) (string, error) {
	return w.gitCmd(dir, args...), nil
}

// TestForkPullRequestLeavesMemoryAlone: with [memory] on, a pull request
// of the repository's own leaves an entry on the state branch; a fork's
// pull request then runs no builder (no prompt carries memory) and
// commits nothing there (no entry is written).
func TestForkPullRequestLeavesMemoryAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	config := strings.Replace(demoLoop, "  [[goal.check]]\n  type = \"manual\"\n  prompt = \"Does the summary read well?\"\n", "", 1) +
		"[memory]\nenabled = true\n"
	w := newWorldWith(t, config)
	d := w.jobDirs("feature")
	if code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), nil); !w.certified(code, outputs(t, d.commands)) {
		t.Fatalf("the repository's own pull request: %d, want success\n%s", code, log)
	}
	entries, err := w.gitOut(w.origin, "ls-tree", "-r", "--name-only", "loop-state")
	if err != nil || !strings.Contains(entries, "/memory/") {
		t.Fatalf("no memory entry on the state branch after a run ended: %v\n%s", err, entries)
	}
	before, _ := w.gitOut(w.origin, "rev-parse", "loop-state")

	w.gh.AddPull(owner, repo, githubfake.Pull{Number: 8, HeadSHA: w.headSHA, HeadRef: "patch-1", HeadRepo: "stranger/demo", BaseRef: "main", BaseSHA: w.baseSHA})
	d = w.jobDirs("feature")
	_, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_fork", nil), nil)
	if strings.Contains(log, "fixer dispatched") {
		t.Error("an agent ran on a fork's code")
	}
	if after, _ := w.gitOut(w.origin, "rev-parse", "loop-state"); after != before {
		t.Errorf("a fork's pull request committed to the state branch: %s -> %s", before, after)
	}
}
