package action

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lenient is what a hostile pull request makes of the loop config in its
// head: a check that always passes.
const lenient = `name = "demo"
[stop]
max_iterations = 1
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "true"
`

// eventWithoutBase writes a pull_request event for PR n whose payload has
// no pull_request.base.sha.
func (w *world) eventWithoutBase(dir string, n int) string {
	w.t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(w.readEvent(dir, "pull_request_opened")), &ev); err != nil {
		w.t.Fatal(err)
	}
	ev["number"] = n
	pr := ev["pull_request"].(map[string]any)
	pr["number"] = n
	delete(pr["base"].(map[string]any), "sha")
	b, err := json.Marshal(ev)
	if err != nil {
		w.t.Fatal(err)
	}
	p := filepath.Join(dir, "event.json")
	writeFile(w.t, p, string(b))
	return p
}

func (w *world) readEvent(dir, name string) string {
	w.t.Helper()
	b, err := os.ReadFile(w.event(dir, name, nil))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// TestPullRequestWithoutBaseSHA: an event without the base's sha never
// lets the head's config decide. The base is read from the API; when it
// cannot be, the job fails with exit 2 and runs nothing.
func TestPullRequestWithoutBaseSHA(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	tests := []struct {
		name    string
		pr      int
		inputs  map[string]string
		code    int
		stop    string // the stop-reason output, when the loop ran
		wantLog string
	}{
		{name: "base from the API", pr: 7, code: exitOK, stop: "awaiting-review"},
		{name: "pull request unknown to the API", pr: 9, code: exitConfig,
			wantLog: "the pull_request event has no base sha, and the pull request could not be read to find it"},
		{name: "no token", pr: 7, inputs: map[string]string{"INPUT_GITHUB-TOKEN": ""}, code: exitConfig,
			wantLog: "the pull_request event has no base sha, and without input github-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			d := w.jobDirs("feature")
			writeFile(t, filepath.Join(d.workspace, ".github/loop.toml"), lenient) // the head's own copy
			w.gitCmd(d.workspace, "commit", "-qam", "lenient checks")
			w.headSHA = w.gitCmd(d.workspace, "rev-parse", "HEAD")
			code, log := inProcess(t, w, d, "pull_request", w.eventWithoutBase(d.workflow, tt.pr), tt.inputs)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, log)
			}
			out := outputs(t, d.commands)
			if out["stop-reason"] != tt.stop || out["success"] == "true" {
				t.Errorf("outputs %v, want stop-reason %q and no success", out, tt.stop)
			}
			if !strings.Contains(log, tt.wantLog) {
				t.Errorf("the job log lacks %q:\n%s", tt.wantLog, log)
			}
		})
	}
}
