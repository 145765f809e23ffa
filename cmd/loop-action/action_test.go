package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// actionEnv is the environment of "loop-action action" in a job of
// octo-org/demo without a token: a workspace, an event file and HOME in a
// temporary directory, the event named.
func actionEnv(t *testing.T, event, payload string) env {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	eventFile := filepath.Join(dir, "event.json")
	if err := os.WriteFile(eventFile, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": dir, "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": ws,
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": eventFile, "GITHUB_REPOSITORY": "octo-org/demo",
		"GITHUB_REF_NAME": "main", "GIT_CONFIG_GLOBAL": filepath.Join(dir, "gitconfig"),
	}
	var list []string
	for k, v := range vars {
		list = append(list, k+"="+v)
	}
	return env{lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }, vars: list, wd: ws}
}

// TestActionExitCodes: the action's mistakes of setup exit 2, as the CLI's
// do (docs/cli.md), and are reported once, in the job log.
func TestActionExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, event, payload string
		want                 int
		log                  string
	}{
		{"unsupported event", "push", `{"ref":"refs/heads/main"}`, exitUsage,
			`::error::event "push" is not handled: trigger loop-action on pull_request, issue_comment, schedule or workflow_dispatch`},
		{"missing config", "schedule", `{"schedule":"0 3 * * *"}`, exitUsage,
			`::error::read the loop config ".github/loop.toml": open`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"action"}, actionEnv(t, tt.event, tt.payload), nil, &stdout, &stderr)
			if code != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, &stdout, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.log) {
				t.Errorf("the job log lacks %q:\n%s", tt.log, &stdout)
			}
			if stderr.Len() != 0 {
				t.Errorf("the error was printed again on stderr:\n%s", &stderr)
			}
		})
	}
}
