package action

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// TestHostileAgentCannotForgeTheJob runs the action with the hostile
// filecmd.sh agent on a pull request: it appends BASH_ENV to the env file,
// success=true and an unclosed heredoc to the outputs, a fake ✅ over the
// summary, and swaps the path file for a symlink and the state file for a
// FIFO, all found by listing the file-command directory. After the job the
// env, path and state files are as before, the outputs file holds exactly
// the action's outputs as the runner parses them, and the summary holds
// only the report.
func TestHostileAgentCannotForgeTheJob(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	agent, err := filepath.Abs("../../testdata/agents/filecmd.sh")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.gh.AddFile(owner, repo, w.baseSHA, ".github/loop.toml", []byte(`name = "demo"
[stop]
max_iterations = 1
[providers.hostile]
command = ["sh", "`+agent+`"]
[[node]]
name = "hostile"
provider = "hostile"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
`))
	d := w.jobDirs("feature")
	files, inputs := map[string]string{}, map[string]string{}
	for name, file := range map[string]string{"GITHUB_ENV": "set_env_", "GITHUB_PATH": "add_path_",
		"GITHUB_OUTPUT": "set_output_", "GITHUB_STATE": "save_state_", "GITHUB_STEP_SUMMARY": "step_summary_"} {
		files[name] = filepath.Join(d.commands, file+"5f1c")
		inputs[name] = files[name]
		writeFile(t, files[name], "")
	}
	writeFile(t, files["GITHUB_ENV"], "FROM_AN_EARLIER_STEP=1\n")
	writeFile(t, files["GITHUB_PATH"], "/opt/tools/bin\n")
	writeFile(t, filepath.Join(filepath.Dir(d.commands), "victim"), "victim\n")

	code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), inputs)
	if code != exitFailed {
		t.Fatalf("exit %d, want 1 (the tests still fail)\n%s", code, log)
	}
	if !strings.Contains(log, "hostile dispatched") {
		t.Fatalf("the hostile agent did not run:\n%s", log)
	}
	for name, want := range map[string]string{"GITHUB_ENV": "FROM_AN_EARLIER_STEP=1\n", "GITHUB_PATH": "/opt/tools/bin\n", "GITHUB_STATE": ""} {
		if got := regular(t, files[name]); got != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	if got := regular(t, filepath.Join(filepath.Dir(d.commands), "victim")); got != "victim\n" {
		t.Errorf("the file behind the agent's symlink holds %q", got)
	}
	outs, err := parseFileCommand(regular(t, files["GITHUB_OUTPUT"]))
	if err != nil {
		t.Fatalf("the runner would refuse the outputs: %v", err)
	}
	var names []string
	for _, o := range outs {
		names = append(names, o[0])
		if o[0] == "success" && o[1] != "false" {
			t.Errorf("output success = %q", o[1])
		}
	}
	sort.Strings(names)
	want := []string{"artifact-url", "cost-usd", "delivered-ref", "delivered-sha", "export-path", "iterations", "pull-request", "run-id", "spend", "stop-reason", "success", "summary", "tokens"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("outputs set (-want +got):\n%s", diff)
	}
	summary := regular(t, files["GITHUB_STEP_SUMMARY"])
	if strings.Contains(summary, "every goal is satisfied") || !strings.HasPrefix(summary, Marker("demo")) || !strings.Contains(summary, "iteration-cap") {
		t.Errorf("job summary:\n%s", summary)
	}
}

// TestForkChecksCannotWriteFileCommands: on a fork's pull request the
// checks run the fork's code; a test script that goes after the file
// commands finds no variables and changes nothing that lasts.
func TestForkChecksCannotWriteFileCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	w := newWorld(t)
	w.gh.AddPull(owner, repo, githubfake.Pull{Number: 8, HeadSHA: w.headSHA, HeadRef: "patch-1", HeadRepo: "stranger/demo", BaseRef: "main", BaseSHA: w.baseSHA})
	d := w.jobDirs("feature")
	env := filepath.Join(d.commands, "set_env_77aa")
	writeFile(t, env, "")
	writeFile(t, filepath.Join(d.workspace, "test.sh"), `env | grep '^GITHUB_' > ../seen-by-check.txt
for f in ../file_commands/*; do echo BASH_ENV=$PWD/pwn.sh >> "$f"; echo success=true >> "$f"; done
exit 0
`)
	code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_fork", nil), map[string]string{"GITHUB_ENV": env})
	if code != exitFailed {
		t.Fatalf("exit %d, want 1 (goal ui fails)\n%s", code, log)
	}
	if got := regular(t, env); got != "" {
		t.Errorf("the env file holds %q", got)
	}
	if out := outputs(t, d.commands); out["success"] != "false" || strings.Contains(regular(t, filepath.Join(d.commands, "set_output")), "success=true") {
		t.Errorf("outputs file:\n%s", regular(t, filepath.Join(d.commands, "set_output")))
	}
	seen := regular(t, filepath.Join(filepath.Dir(d.workspace), "seen-by-check.txt"))
	for _, name := range []string{"GITHUB_ENV=", "GITHUB_OUTPUT=", "GITHUB_STEP_SUMMARY="} {
		if strings.Contains(seen, name) {
			t.Errorf("the fork's check saw %s", name)
		}
	}
}

// regular reads a file that must be a regular file.
func regular(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		t.Fatalf("%s is %v, not a regular file", filepath.Base(p), fi.Mode())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
