//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/testing/modelfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// The real-CLI suite: every preset driven end to end through the real agent
// CLI (Claude Code, Codex, Gemini CLI, opencode), each pointed at a scripted
// model server on 127.0.0.1 (internal/testing/modelfake) that speaks the
// CLI's own wire protocol and has the model fix calc.sh with the CLI's own
// edit tool. scripts/realcli.sh installs the CLIs at the versions pinned in
// scripts/realcli/package-lock.json and runs these tests in a network
// namespace with only a loopback interface, where everything but /tmp is
// read-only. Without the CLIs (LOOP_REALCLI_BIN unset) every test here
// skips, unless LOOP_REALCLI_REQUIRE is set, as the script sets it.
//
// The top-level tests are not parallel: each waits for its subtests, and
// then (walled in by the script) checks that nothing was left in /tmp
// outside the tests' own directories.

// realBound bounds one call of a real CLI or run of loop-action on one.
const realBound = 4 * time.Minute

// realBin is the directory holding the CLIs' executables, or skips t.
func realBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LOOP_REALCLI_BIN")
	if dir == "" {
		if os.Getenv("LOOP_REALCLI_REQUIRE") != "" {
			t.Fatal("LOOP_REALCLI_REQUIRE is set but LOOP_REALCLI_BIN is not: run scripts/realcli.sh")
		}
		t.Skip("the real agent CLIs are not installed: scripts/realcli.sh installs them and runs these tests (it sets LOOP_REALCLI_BIN)")
	}
	return dir
}

// realCLI is how the suite drives one preset's CLI.
type realCLI struct {
	preset string
	// configure writes the CLI's config into its private home and returns
	// the environment that points it at the server at url with key.
	configure func(t *testing.T, home, url, key string) []string
	// fix is the script of a model that fixes calc.sh in root with the
	// CLI's own tools: it reads the file, then edits it (step 1), then
	// ends.
	fix func(root string) []modelfake.Step
	// mainOnly: the CLI reports the tokens of its main conversation only
	// (opencode leaves its title request out).
	mainOnly bool
	// cost: the CLI reports a cost of its own (Claude Code).
	cost bool
	// retries are the env table's values (NAME = "value") that bound the
	// CLI's retries of a failed request in the failure cases: Claude Code
	// retries a 500 ten times over minutes.
	retries []string
	// gateway is the variable that points the CLI at the server, when it
	// has one: runs of loop-action set it in the provider's env table,
	// not in the runner's environment.
	gateway string
}

const (
	calcBug   = "echo $(($1 - $2))"
	calcFixed = "echo $(($1 + $2))"
)

// quiet are the variables that keep the CLIs from telemetry, update checks
// and error reports (the walls of scripts/realcli.sh would stop them
// anyway).
var quiet = []string{
	"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
	"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
	"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1",
}

var realCLIs = []realCLI{
	{
		preset: "claude-code", cost: true, gateway: "ANTHROPIC_BASE_URL", retries: []string{`CLAUDE_CODE_MAX_RETRIES = "1"`},
		configure: func(t *testing.T, home, url, key string) []string {
			return []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=" + key}
		},
		fix: func(root string) []modelfake.Step {
			calc := filepath.Join(root, "calc.sh")
			return []modelfake.Step{
				{Tool: "Read", Input: map[string]any{"file_path": calc}},
				{Tool: "Edit", Input: map[string]any{"file_path": calc, "old_string": calcBug, "new_string": calcFixed}},
				{Text: "Fixed add in calc.sh."},
			}
		},
	},
	{
		preset: "codex",
		configure: func(t *testing.T, home, url, key string) []string {
			writeTestFile(t, filepath.Join(home, ".codex", "config.toml"), `model = "gpt-5.5"
model_provider = "fake"
check_for_update_on_startup = false
[model_providers.fake]
name = "fake"
base_url = "`+url+`/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
[analytics]
enabled = false
`)
			return []string{"CODEX_HOME=" + filepath.Join(home, ".codex"), "OPENAI_API_KEY=" + key}
		},
		fix: func(string) []modelfake.Step {
			return []modelfake.Step{
				{Tool: "exec_command", Input: map[string]any{"cmd": "cat calc.sh"}},
				{Tool: "apply_patch", Raw: "*** Begin Patch\n*** Update File: calc.sh\n@@\n-\t" + calcBug + "\n+\t" + calcFixed + "\n*** End Patch\n"},
				{Text: "Fixed add in calc.sh."},
			}
		},
	},
	{
		preset: "gemini", gateway: "GOOGLE_GEMINI_BASE_URL",
		configure: func(t *testing.T, home, url, key string) []string {
			writeTestFile(t, filepath.Join(home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "maxAttempts": 1}
}
`)
			return []string{"GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_API_KEY=" + key}
		},
		fix: func(root string) []modelfake.Step {
			return []modelfake.Step{
				{Tool: "read_file", Input: map[string]any{"file_path": filepath.Join(root, "calc.sh")}},
				{Tool: "replace", Input: map[string]any{"file_path": filepath.Join(root, "calc.sh"),
					"instruction": "Make add add.", "old_string": calcBug, "new_string": calcFixed}},
				{Text: "Fixed add in calc.sh."},
			}
		},
	},
	{
		preset: "opencode", mainOnly: true,
		configure: func(t *testing.T, home, url, key string) []string {
			writeTestFile(t, filepath.Join(home, ".config", "opencode", "opencode.json"), `{
  "$schema": "https://opencode.ai/config.json",
  "model": "fake/fake-model",
  "autoupdate": false,
  "share": "disabled",
  "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
    "options": {"baseURL": "`+url+`/v1", "apiKey": "{env:FAKE_API_KEY}"},
    "models": {"fake-model": {"name": "Fake model"}}}}
}
`)
			return []string{"FAKE_API_KEY=" + key}
		},
		fix: func(root string) []modelfake.Step {
			calc := filepath.Join(root, "calc.sh")
			return []modelfake.Step{
				{Tool: "read", Input: map[string]any{"filePath": calc}},
				{Tool: "edit", Input: map[string]any{"filePath": calc, "oldString": calcBug, "newString": calcFixed}},
				{Text: "Fixed add in calc.sh."},
			}
		},
	},
}

// realLoop is the quickstart loop with one builder on preset; extra is
// more of the provider's table.
func realLoop(preset, extra string) string {
	return `name = "real-` + preset + `"
objective = "Make the quickstart's tests pass."
[stop]
max_iterations = 1
[providers.agent]
preset = "` + preset + `"
timeout = "3m"
` + extra + `
[[node]]
name = "fixer"
provider = "agent"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
`
}

// realEnv is the environment of loop-action (or of a direct call) on c's
// CLI: PATH with the CLIs first, a private HOME and TMPDIR, the quiet
// variables, and what c's configure returns but the variables in skip.
func realEnv(t *testing.T, c realCLI, srv *modelfake.Server, key, home, tmp string, skip ...string) []string {
	env := append([]string{
		"PATH=" + realBin(t) + string(filepath.ListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "TMPDIR=" + tmp, "NO_COLOR=1",
	}, quiet...)
	for _, kv := range c.configure(t, home, srv.URL, key) {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(skip, name) {
			env = append(env, kv)
		}
	}
	return env
}

// realTable is the provider table's part of a loop on c's CLI: its
// gateway variable in the env table, with more values in values.
func realTable(c realCLI, srv *modelfake.Server, values ...string) string {
	if c.gateway != "" {
		values = append(values, c.gateway+" = "+strconv.Quote(srv.URL))
	}
	if len(values) == 0 {
		return ""
	}
	return "env = { " + strings.Join(values, ", ") + " }\n"
}

// realRun is one run of loop-action on a real CLI.
type realRun struct {
	dir, home, tmp string
	code           int
	out            []byte
	events         []ledgerEvent
	took           time.Duration
}

// runReal runs `loop-action run` in dir (a project with loop.toml) on c's
// CLI, with the model server srv; c's gateway variable must be in the
// loop's env table (realTable).
func runReal(t *testing.T, c realCLI, srv *modelfake.Server, key, dir string) realRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), realBound)
	defer cancel()
	r := realRun{dir: dir, home: t.TempDir(), tmp: t.TempDir()}
	env := realEnv(t, c, srv, key, r.home, r.tmp, c.gateway)
	before := snapshotTree(t, dir)
	start := time.Now()
	out, err := loopAction(ctx, t, dir, env, "run").CombinedOutput()
	r.took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("loop-action did not finish within %v: %v\n%s", realBound, err, out)
	}
	r.out, r.code = out, hostileExit(ctx, t, err, out)
	led, err := loopAction(ctx, t, dir, env, "ledger", "--json").Output()
	if err != nil {
		t.Fatalf("ledger: %v\n%s", err, led)
	}
	if r.events, err = parseLedger(string(led)); err != nil {
		t.Fatalf("ledger: %v", err)
	}
	checkWrites(t, r, before)
	return r
}

// node is the outcome event of the run's one node call.
func (r realRun) node(t *testing.T) ledgerEvent {
	t.Helper()
	for _, e := range r.events {
		if e.str("type") == "node_succeeded" || e.str("type") == "node_failed" {
			return e
		}
	}
	t.Fatalf("no node outcome in the ledger:\n%s", r.out)
	return nil
}

// snapshotTree maps every regular file below dir, but .loop/, to its
// content.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == ".loop" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkWrites holds a run to its walls: in the project, only calc.sh may
// have changed (and .loop/, the runner's); loop-action's own TMPDIR is left
// empty (an agent's temporary files go to a private TMPDIR of its own,
// emptied after the call and removed with the scratch area); the runner's scratch area is gone. Writes
// anywhere else but /tmp fail in scripts/realcli.sh's walls, and /tmp is
// checked by checkTmp.
func checkWrites(t *testing.T, r realRun, before map[string]string) {
	t.Helper()
	after := snapshotTree(t, r.dir)
	delete(before, "calc.sh")
	delete(after, "calc.sh")
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("the agent changed the project beyond calc.sh (-before +after):\n%s", d)
	}
	if left, _ := os.ReadDir(r.tmp); len(left) > 0 {
		t.Errorf("files left in loop-action's TMPDIR: %v", names(left))
	}
	if left, _ := os.ReadDir(filepath.Join(r.dir, ".loop", "tmp")); len(left) > 0 {
		t.Errorf("files left in the run's scratch area .loop/tmp: %v", names(left))
	}
}

func names(entries []fs.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// knownStray are what a CLI writes in /tmp whatever TMPDIR says, as
// observed (docs/config.md, "Real CLIs"): Codex 0.171.0 makes an empty
// directory codex-daemon-<uid> (mode 0700) there.
var knownStray = map[string]bool{fmt.Sprintf("codex-daemon-%d", os.Getuid()): true}

// checkTmp, registered by each top-level test, runs after its subtests
// have removed their directories: inside the walls of scripts/realcli.sh
// /tmp is a fresh file system, so anything left there was written outside
// every test's directories (a CLI that ignored TMPDIR and HOME).
func checkTmp(t *testing.T) {
	t.Helper()
	if os.Getenv("LOOP_REALCLI_WALLED") == "" {
		return
	}
	t.Cleanup(func() {
		entries, err := os.ReadDir(os.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var stray []string
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "Test") && !strings.HasPrefix(e.Name(), "testscript-main") && !knownStray[e.Name()] {
				stray = append(stray, e.Name())
			}
		}
		if len(stray) > 0 {
			t.Errorf("written to %s outside the tests' directories: %v", os.TempDir(), stray)
		}
	})
}

// callReal runs c's CLI once in dir as the preset's provider runs it (its
// argv, the prompt on stdin) and returns what it printed on stdout and on
// stderr.
func callReal(t *testing.T, c realCLI, srv *modelfake.Server, key, dir string, table ...string) (stdout, stderr []byte) {
	t.Helper()
	return callRealTier(t, c, srv, key, dir, loop.TierStandard, table...)
}

// callRealTier is callReal with tier's arguments.
func callRealTier(t *testing.T, c realCLI, srv *modelfake.Server, key, dir, tier string, table ...string) (stdout, stderr []byte) {
	t.Helper()
	cfg, err := loop.Parse("loop.toml", []byte(realLoop(c.preset, "")))
	if err != nil {
		t.Fatal(err)
	}
	argv := cfg.Providers["agent"].Argv(tier)
	ctx, cancel := context.WithTimeout(t.Context(), realBound)
	defer cancel()
	cmd := subprocess.Command(ctx, filepath.Join(realBin(t), argv[0]), argv[1:]...)
	cmd.Dir = dir
	cmd.Env = realEnv(t, c, srv, key, t.TempDir(), t.TempDir())
	for _, kv := range table { // NAME = "value"
		name, value, _ := strings.Cut(kv, " = ")
		unquoted, err := strconv.Unquote(value)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, name+"="+unquoted)
	}
	cmd.Stdin = strings.NewReader("Fix the failing test in test.sh.\n")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = &o, &e, 5*time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v: %v\n%s%s", argv[0], realBound, err, &o, &e)
	}
	return o.Bytes(), e.Bytes()
}

// seed writes the quickstart project and loopToml into dir, as project does
// into a directory of its own.
func seed(t *testing.T, dir, loopToml string) {
	t.Helper()
	src := project(t, loopToml)
	if err := copyDir(src, dir); err != nil {
		t.Fatal(err)
	}
}
