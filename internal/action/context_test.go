package action

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEventFileProblems: every way the event file can fail is said as it
// is, as a mistake in the job's setup (exit 2), before anything else runs.
func TestEventFileProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"unset", "", "GITHUB_EVENT_PATH is unset"},
		{"missing", filepath.Join(dir, "gone.json"), `the event file "` + filepath.Join(dir, "gone.json") + `" (GITHUB_EVENT_PATH) is missing`},
		{"a directory", dir, "(GITHUB_EVENT_PATH): is a directory"},
		{"not JSON", write("torn.json", `{"action": "opened", "numb`), "(GITHUB_EVENT_PATH) is not a JSON object: unexpected end of JSON input"},
		{"not an object", write("list.json", `[1, 2]`), "(GITHUB_EVENT_PATH) is not a JSON object: json: cannot unmarshal array"},
		{"null", write("null.json", `null`), "(GITHUB_EVENT_PATH) holds no event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": tt.path,
				"GITHUB_REPOSITORY": owner + "/" + repo, "GITHUB_WORKSPACE": t.TempDir(),
			}
			var out bytes.Buffer
			err := Main(context.Background(), Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Now: time.Now})
			if code := exitOf(err); code != exitConfig {
				t.Errorf("exit %d, want %d (%v)", code, exitConfig, err)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to say %q", err, tt.want)
			}
			if !strings.Contains(out.String(), "::error::"+err.Error()) {
				t.Errorf("the job log does not carry the error:\n%s", &out)
			}
		})
	}
}

// TestLogsVersion: the job log says which loop-action runs, and which
// reference of the action the workflow used.
func TestLogsVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GITHUB_ACTION_REPOSITORY": "loop-action/loop-action", "GITHUB_ACTION_REF": "v1"}, "loop-action v1.2.3 (uses: loop-action/loop-action@v1)\n"},
		{map[string]string{}, "loop-action v1.2.3\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		_ = Main(context.Background(), Env{Getenv: func(k string) string { return tt.env[k] }, Stdout: &out, Now: time.Now, Version: "v1.2.3"})
		if line, _, _ := strings.Cut(out.String(), "::"); line != tt.want {
			t.Errorf("first line of the log %q, want %q", line, tt.want)
		}
	}
}
