package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// readmeLoop's only goal holds on the feature branch, which adds README.md.
const readmeLoop = `name = "demo"
[stop]
max_iterations = 1
[providers.script]
command = ["sh", "agents/fixer.sh"]
[[node]]
name = "fixer"
provider = "script"
goals = ["readme"]
[[goal]]
name = "readme"
  [[goal.check]]
  type = "file_exists"
  path = "README.md"
`

// TestGateOnlyOutcome: a fork's pull request gets an outcome of its own —
// stop-reason gate-only, no run id, no iterations — whose success says
// whether the gate holds, and the job summary says the same.
func TestGateOnlyOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	tests := []struct {
		name, config string
		code         int
		outputs      map[string]string
		heading      string
	}{
		{"the gate does not hold", demoLoop, exitFailed, map[string]string{
			"success": "false", "stop-reason": "gate-only", "run-id": "", "iterations": "0",
			"summary": "loop demo: gate-only, the gate does not hold; 0 of 2 blocking goals satisfied",
		}, "## ❌ loop `demo`: gate-only, the gate does not hold\n"},
		{"the gate holds", readmeLoop, exitOK, map[string]string{
			"success": "true", "stop-reason": "gate-only", "run-id": "", "iterations": "0",
			"summary": "loop demo: gate-only, the gate holds; 1 of 1 blocking goals satisfied",
		}, "## ✅ loop `demo`: gate-only, the gate holds\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorldWith(t, tt.config)
			w.gh.AddPull(owner, repo, githubfake.Pull{Number: 8, HeadSHA: w.headSHA, HeadRef: "patch-1", HeadRepo: "stranger/demo", BaseRef: "main", BaseSHA: w.baseSHA})
			d := w.jobDirs("feature")
			code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_fork", nil), nil)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, log)
			}
			out := outputs(t, d.commands)
			got := map[string]string{}
			for k := range tt.outputs {
				got[k] = out[k]
			}
			if diff := cmp.Diff(tt.outputs, got); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			summary, _ := os.ReadFile(filepath.Join(d.commands, "step_summary"))
			if !strings.Contains(string(summary), tt.heading) || strings.Contains(string(summary), "iteration 0 of 0") {
				t.Errorf("job summary, want %q and no iterations:\n%s", tt.heading, summary)
			}
		})
	}
}
