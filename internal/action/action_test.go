package action

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// invoker runs the action once: inside this process, or in the real
// container. It returns the exit code and what the action printed.
type invoker func(t *testing.T, w *world, d jobDirs, event, eventFile string, inputs map[string]string) (int, string)

// inProcess calls Main with the job's environment.
func inProcess(t *testing.T, w *world, d jobDirs, event, eventFile string, inputs map[string]string) (int, string) {
	t.Helper()
	env := w.env(event, eventFile, d.workspace, d.commands, d.home, inputs)
	environ := os.Environ()
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	var out bytes.Buffer
	err := Main(context.Background(), Env{
		Getenv: func(k string) string { return env[k] }, Environ: environ, Stdout: &out, Now: time.Now, Version: "test", Git: DeliveryGit{},
	})
	return exitOf(err), out.String()
}

// The exit codes the CLI gives Main's errors (docs/cli.md): exitOf mirrors
// cmd/loop-action's exitCode, whose tests hold the binary to them.
const (
	exitOK       = 0
	exitFailed   = 1
	exitConfig   = 2
	exitInternal = 3
)

func exitOf(err error) int {
	var (
		setup *UsageError
		cfg   *loop.ConfigError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, ErrUnsuccessful):
		return exitFailed
	case errors.As(err, &setup), errors.As(err, &cfg), errors.Is(err, state.ErrRefusedBranch):
		return exitConfig
	}
	return exitInternal
}

// TestPullRequestReviewApproveInProcess is the scenario of the container
// test, with the action called in this process.
func TestPullRequestReviewApproveInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	scenario(t, newWorld(t), inProcess)
}

// scenario: a PR is opened, the loop runs and pauses for review; a reader's
// approval is refused; a writer's is recorded and the loop finishes in the
// same job, uploading the export; a second PR event changes nothing. The
// jobs run with deliver: none, so the certified fix stays on the state
// branch: the head keeps failure (the status rule), and the jobs after the
// run succeeded fail (fail-on-unsuccessful). Delivery is driven in memory
// (deliver_test.go) and end to end with package delivery.
func scenario(t *testing.T, w *world, run invoker) {
	// 1 and 2. PR opened: the loop runs and pauses for the ui review.
	d := w.jobDirs("feature")
	code, log := run(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), nil)
	if code != exitOK {
		t.Fatalf("pull_request exited %d\n%s", code, log)
	}
	out := outputs(t, d.commands)
	if out["stop-reason"] != "awaiting-review" || out["success"] != "false" || out["run-id"] != "demo/pr-7" || out["iterations"] != "1" {
		t.Fatalf("outputs after the PR event: %v\n%s", out, log)
	}
	comments := w.gh.Comments(owner, repo, 7)
	if len(comments) != 2 || !strings.HasPrefix(comments[0].Body, Marker("demo")) || comments[0].User != bot {
		t.Fatalf("comments after the PR event: %+v", comments)
	}
	if !strings.Contains(comments[0].Body, "`/loop approve ui`") || !strings.Contains(comments[1].Body, "Review wanted") {
		t.Errorf("the sticky comment or the review request lacks the approve command:\n%s\n---\n%s", comments[0].Body, comments[1].Body)
	}
	statuses := w.gh.Statuses(owner, repo, w.headSHA)
	if last := statuses[len(statuses)-1]; last.State != "pending" || last.Context != "loop/demo" || !strings.Contains(last.Description, "awaiting review") {
		t.Errorf("last status %+v, want pending awaiting review", last)
	}
	summary, _ := os.ReadFile(filepath.Join(d.commands, "step_summary"))
	if !strings.Contains(string(summary), "awaiting-review") || !strings.Contains(string(summary), "xychart-beta") {
		t.Errorf("job summary:\n%s", summary)
	}
	if unmasked(log, w.token) {
		t.Error("the job log carries the token outside its add-mask command")
	}

	// 3. A reader's approval is refused with a reaction, and nothing is
	// recorded; only writers make the bot speak.
	id := w.gh.AddComment(owner, repo, 7, "reader", "User", "/loop approve")
	d = w.jobDirs("feature")
	code, log = run(t, w, d, "issue_comment", w.event(d.workflow, "issue_comment_created", map[string]string{"body": "/loop approve", "user": "reader", "id": itoa(id)}), nil)
	if code != exitOK {
		t.Fatalf("the reader's comment job exited %d\n%s", code, log)
	}
	if got := w.gh.Reactions(owner, repo, id); !cmp.Equal(sorted(got), []string{"-1", "eyes"}) {
		t.Errorf("reactions to the reader's approval: %v", got)
	}
	if last := lastComment(w); last.ID != id {
		t.Errorf("the bot answered the reader: %+v", last)
	}

	// 4. A writer's approval is recorded; the loop finishes in the same job.
	id = w.gh.AddComment(owner, repo, 7, "writer", "User", "LGTM\n\n/loop approve ui")
	d = w.jobDirs("feature")
	code, log = run(t, w, d, "issue_comment", w.event(d.workflow, "issue_comment_created", map[string]string{"body": "LGTM\n\n/loop approve ui", "user": "writer", "id": itoa(id)}), nil)
	if code != exitFailed {
		t.Fatalf("the writer's comment job exited %d, want %d (the fix is not delivered)\n%s", code, exitFailed, log)
	}
	if got := w.gh.Reactions(owner, repo, id); !cmp.Equal(sorted(got), []string{"+1", "eyes"}) {
		t.Errorf("reactions to the writer's approval: %v", got)
	}
	out = outputs(t, d.commands)
	if out["success"] != "false" || out["stop-reason"] != "success" || out["artifact-url"] == "" || out["delivered-sha"] != "" {
		t.Fatalf("outputs after the approval: %v\n%s", out, log)
	}
	statuses = w.gh.Statuses(owner, repo, w.headSHA)
	if last := statuses[len(statuses)-1]; last.State != "failure" || !strings.Contains(last.Description, "not delivered") {
		t.Errorf("last status %+v, want failure: the head does not carry the certified fix", last)
	}
	zipped, ok := w.art.Artifact("demo-success")
	if !ok {
		t.Fatal("no artifact demo-success was uploaded")
	}
	exported := tree(t, filepath.Join(d.workspace, out["export-path"]))
	if diff := cmp.Diff(exported, unzip(t, zipped)); diff != "" {
		t.Errorf("the artifact differs from the export (-export +artifact):\n%s", diff)
	}

	// 5. Another PR event after success changes nothing.
	before, statusesBefore := len(w.gh.Comments(owner, repo, 7)), len(w.gh.Statuses(owner, repo, w.headSHA))
	sticky := w.gh.Comments(owner, repo, 7)[0].Body
	d = w.jobDirs("feature")
	code, log = run(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), nil)
	if code != exitFailed {
		t.Fatalf("the second PR event exited %d, want %d\n%s", code, exitFailed, log)
	}
	after := w.gh.Comments(owner, repo, 7)
	if len(after) != before || len(w.gh.Statuses(owner, repo, w.headSHA)) != statusesBefore {
		t.Errorf("a second PR event after success posted %d comments and %d statuses", len(after)-before, len(w.gh.Statuses(owner, repo, w.headSHA))-statusesBefore)
	}
	if after[0].Body != sticky {
		t.Errorf("the sticky comment changed:\n%s", after[0].Body)
	}
	// Its fresh checkout holds the buggy calc.sh and no export: the export
	// is rebuilt from the certified workspace, which the state branch keeps.
	fixed := w.gitCmd(w.origin, "show", "loop-state:runs/demo/pr-7/workspace/calc.sh")
	if fixed == w.gitCmd(w.origin, "show", "feature:calc.sh") {
		t.Error("the state branch's workspace holds the unfixed calc.sh after the second PR event")
	}
	out = outputs(t, d.commands)
	certified := w.gitCmd(w.origin, "show", "loop-state:runs/demo/pr-7/workspace/out/summary.md")
	if got := tree(t, filepath.Join(d.workspace, out["export-path"]))["out/summary.md"]; strings.TrimSpace(got) != certified {
		t.Errorf("the rebuilt export's out/summary.md = %q, want the certified %q", got, certified)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func sorted(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

func lastComment(w *world) githubfake.Comment {
	cs := w.gh.Comments(owner, repo, 7)
	return cs[len(cs)-1]
}

// unmasked reports whether secret appears in log anywhere but in the
// ::add-mask:: command that hides it.
func unmasked(log, secret string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, secret) && line != "::add-mask::"+secret {
			return true
		}
	}
	return false
}
