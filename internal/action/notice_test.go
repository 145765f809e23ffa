package action

import (
	"strings"
	"testing"
)

// TestRefusedCommandsSaySo: an issue_comment job that carries out nothing
// says why — a notice in the job log for each command it refused, and the
// outputs: success false, run-id, and a summary line naming what became
// of the commands. Before, such a job set no output at all and logged
// nothing of why.
func TestRefusedCommandsSaySo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		user    string
		body    string
		summary string // part of the summary output
		notice  string // part of a notice line; "" when the summary is the only one
	}{
		{name: "a reader's /loop run", user: "reader", body: "/loop run",
			summary: "loop demo: nothing to run: comment 3000000001 by @reader refused: /loop run needs write permission on octo-org/demo; you have read",
			notice:  "comment 3000000001 by @reader refused: /loop run needs write permission"},
		{name: "a writer's /loop run before the loop ran", user: "writer", body: "/loop run",
			summary: "refused: the loop has not run on this pull request yet", notice: "comment 3000000001 by @writer refused"},
		{name: "a writer's malformed command", user: "writer", body: "/loop frobnicate",
			summary: "refused: unknown /loop command `frobnicate`", notice: "refused: unknown /loop command"},
		{name: "a writer's /loop help", user: "writer", body: "/loop help", summary: "loop demo: nothing to run: comment 3000000001 by @writer: /loop help done"},
		{name: "a stranger's /loop status before the loop ran", user: "stranger", body: "/loop status",
			summary: "loop demo: nothing to report: the loop has not run on this pull request yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFlow(t, deliverLoop, fixer(""))
			_, res := f.comment(tt.user, tt.body, nil)
			if res.err != nil {
				t.Fatalf("job: %v\n%s", res.err, res.log)
			}
			out := res.outputs
			if !strings.Contains(out["summary"], tt.summary) || out["success"] != "false" || out["run-id"] != "demo/pr-7" {
				t.Errorf("outputs %v, want success false, run-id demo/pr-7 and a summary containing %q", out, tt.summary)
			}
			if !strings.Contains(res.log, "::notice::"+out["summary"]+"\n") {
				t.Errorf("no notice of the summary:\n%s", res.log)
			}
			if tt.notice != "" && !noticed(res.log, tt.notice) {
				t.Errorf("no notice containing %q:\n%s", tt.notice, res.log)
			}
			if f.ran() != 0 {
				t.Errorf("the agent ran %d times", f.ran())
			}
		})
	}
}

// TestClosedPullRequestSaysSo: the closed pull request's job says it did
// nothing, and why.
func TestClosedPullRequestSaysSo(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	ev := prEvent(f.head)
	ev["action"] = "closed"
	res := f.job("pull_request", ev, f.head, nil)
	want := "ignored: pull request #7 is closed: nothing to do"
	if res.err != nil || res.outputs["summary"] != want || res.outputs["success"] != "false" || !strings.Contains(res.log, "::notice::"+want+"\n") {
		t.Errorf("job: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
}

// noticed reports whether a notice line of log contains text.
func noticed(log, text string) bool {
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, "::notice::") && strings.Contains(line, text) {
			return true
		}
	}
	return false
}
