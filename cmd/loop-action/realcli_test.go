//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/testing/modelfake"
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
// removed after the call); the runner's scratch area is gone. Writes
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
	cmd := exec.CommandContext(ctx, filepath.Join(realBin(t), argv[0]), argv[1:]...)
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

// TestRealCLIFixesTheBug: each preset's CLI, its model asking for the CLI's
// own edit tool, fixes calc.sh and the run reaches success; the tokens
// recorded are those the server served (for opencode, those of the main
// conversation, which is what it reports) and never estimated; the cost is
// the one Claude Code printed, and for opencode, which reports a cost of 0
// for a model it has no price of, the provider's price. A direct call of
// the CLI with the same script captures its output as a golden file
// (internal/runner/provider/testdata/real) that the stand-ins are held to.
func TestRealCLIFixesTheBug(t *testing.T) {
	checkTmp(t)
	for _, c := range realCLIs {
		t.Run(c.preset, func(t *testing.T) {
			t.Parallel()
			realBin(t)
			key := secretValue(t, "sk-")
			capture := project(t, realLoop(c.preset, ""))
			csrv := modelfake.New(t, modelfake.Script{Steps: c.fix(capture)})
			stdout, stderr := callReal(t, c, csrv, key, capture)
			golden(t, c.preset, "success", stdout, stderr, capture)

			dir := t.TempDir()
			srv := modelfake.New(t, modelfake.Script{Steps: c.fix(dir)})
			extra := realTable(c, srv)
			if c.preset == "opencode" {
				extra += "price = { input = 2.0, output = 8.0 }"
			}
			seed(t, dir, realLoop(c.preset, extra))
			r := runReal(t, c, srv, key, dir)
			if r.code != exitSuccess {
				t.Fatalf("exit code %d, want %d\n%s\nserved: %+v", r.code, exitSuccess, r.out, srv.Served())
			}
			if b, err := os.ReadFile(filepath.Join(dir, "calc.sh")); err != nil || !strings.Contains(string(b), calcFixed) {
				t.Errorf("calc.sh was not fixed: %q, %v", b, err)
			}
			in, out := srv.Total(c.mainOnly)
			ev := r.node(t)
			if got, want := ev.str("tokens"), strconv.FormatInt(in+out, 10); got != want {
				t.Errorf("tokens recorded %s, want %s, as served: %+v", got, want, srv.Served())
			}
			if ev.str("estimated") != "" {
				t.Errorf("tokens recorded as estimated: %v", ev)
			}
			switch {
			case c.cost:
				want := printedCost(t, stdout)
				if got, _ := strconv.ParseFloat(ev.str("cost_usd"), 64); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", want) {
					t.Errorf("cost recorded $%v, want $%v as the CLI printed", got, want)
				}
			case c.preset == "opencode":
				want := (float64(in)*2 + float64(out)*8) / 1e6
				if got, _ := strconv.ParseFloat(ev.str("cost_usd"), 64); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", want) {
					t.Errorf("cost recorded $%v, want $%v at the provider's price", got, want)
				}
			}
			noSecretIn(t, dir, r.out, key)
		})
	}
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

// printedCost is the total_cost_usd of Claude Code's result line.
func printedCost(t *testing.T, stdout []byte) float64 {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	var res struct {
		Type string  `json:"type"`
		Cost float64 `json:"total_cost_usd"`
	}
	if err := jsonUnmarshal(lines[len(lines)-1], &res); err != nil || res.Type != "result" {
		t.Fatalf("no result line in Claude Code's output (%v):\n%s", err, stdout)
	}
	return res.Cost
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// realGoldens is where the captured real output lives, beside the
// stand-in recordings it holds to their shape.
const realGoldens = "../../internal/runner/provider/testdata/real"

// scrubbers make a capture independent of the machine and the run: the
// project's path, the tests' temporary directories, the server's port.
var scrubbers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`/tmp/Test[^\s"\\/]*(/[0-9]+)?`), "$TMP"},
	{regexp.MustCompile(`127\.0\.0\.1:[0-9]+`), "127.0.0.1:PORT"},
}

func scrub(b []byte, root, bin string) []byte {
	b = bytes.ReplaceAll(b, []byte(root), []byte("$ROOT"))
	b = bytes.ReplaceAll(b, []byte(filepath.Dir(filepath.Dir(bin))), []byte("$CLIS"))
	for _, s := range scrubbers {
		b = s.re.ReplaceAllLiteral(b, []byte(s.with))
	}
	return b
}

// golden writes (with -update) or checks the capture of preset's call
// named name: stdout in NAME.out, stderr in NAME.err. Without -update the
// shape of what the CLI printed (modelfake.Shape) must equal the golden's:
// a CLI whose output changed shape fails here, and the stand-ins are held
// to the goldens by TestStandInsHoldToRealOutput in the provider package.
func golden(t *testing.T, preset, name string, stdout, stderr []byte, root string) {
	t.Helper()
	dir := filepath.Join(realGoldens, preset)
	bin := realBin(t)
	files := map[string][]byte{name + ".out": scrub(stdout, root, bin), name + ".err": scrub(stderr, root, bin)}
	for file, got := range files {
		path := filepath.Join(dir, file)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("no golden capture (scripts/realcli.sh -update writes it): %v", err)
		}
		if d := cmp.Diff(modelfake.Shape(want), modelfake.Shape(got)); d != "" {
			t.Errorf("%s prints another shape than %s (-golden +now); review, then scripts/realcli.sh -update:\n%s", preset, path, d)
		}
	}
}

// realFailure is a model server failing mid-session (or, at step 0, on
// every request: a wrong key) and what each CLI's own report of it says.
type realFailure struct {
	name string
	fail modelfake.Failure
	// want is what the node's failure must say, per preset: the CLI's own
	// message (for Codex's 500, its own words, not the server's).
	want map[string]string
	// reported: presets whose report of the failed call carries the
	// tokens of the requests that went well; the others' are estimated.
	reported []string
}

var realFailures = []realFailure{
	{
		name: "401", fail: modelfake.Failure{At: 0, Status: 401, Message: "invalid x-api-key (scripted)"},
		want: map[string]string{"claude-code": "401", "codex": "invalid x-api-key (scripted)",
			"gemini": "401 UNAUTHENTICATED: invalid x-api-key (scripted)", "opencode": "invalid x-api-key (scripted)"},
	},
	{
		name: "400", fail: modelfake.Failure{At: 1, Status: 400, Message: "bad request (scripted)"},
		want: map[string]string{"claude-code": "API Error: 400 bad request (scripted)", "codex": "bad request (scripted)",
			"gemini": "400 INVALID_ARGUMENT: bad request (scripted)", "opencode": "bad request (scripted)"},
		reported: []string{"claude-code", "opencode"},
	},
	{
		name: "500", fail: modelfake.Failure{At: 1, Status: 500, Message: "overloaded (scripted)"},
		want: map[string]string{"claude-code": "API Error: 500 overloaded (scripted)", "codex": "high demand",
			"gemini": "500 INTERNAL: overloaded (scripted)", "opencode": "overloaded (scripted)"},
		reported: []string{"claude-code", "opencode"},
	},
}

// TestRealCLIFailures: a wrong key (401 on every request), and a 400 and a
// 500 after the first turn went well, end the call with the CLI's own
// message in the node's failure, in seconds (a wrong key never waits out
// the provider's timeout); a call that failed before any model answered is
// charged no tokens, and one that failed later is charged what the CLI
// reported, or an estimate where its report of a failure carries no usage
// (Codex, Gemini CLI). Each failure's output is captured as a golden file.
func TestRealCLIFailures(t *testing.T) {
	checkTmp(t)
	for _, f := range realFailures {
		for _, c := range realCLIs {
			t.Run(f.name+"/"+c.preset, func(t *testing.T) {
				t.Parallel()
				realBin(t)
				key := secretValue(t, "sk-")
				capture := project(t, realLoop(c.preset, ""))
				csrv := modelfake.New(t, modelfake.Script{Steps: c.fix(capture), Fail: &f.fail})
				stdout, stderr := callReal(t, c, csrv, key, capture, c.retries...)
				golden(t, c.preset, f.name, stdout, stderr, capture)

				dir := t.TempDir()
				srv := modelfake.New(t, modelfake.Script{Steps: c.fix(dir), Fail: &f.fail})
				seed(t, dir, realLoop(c.preset, realTable(c, srv, c.retries...)))
				r := runReal(t, c, srv, key, dir)
				if r.code != exitUnsuccessful {
					t.Fatalf("exit code %d, want %d\n%s", r.code, exitUnsuccessful, r.out)
				}
				ev := r.node(t)
				if ev.str("type") != "node_failed" || !strings.Contains(ev.str("reason"), f.want[c.preset]) {
					t.Errorf("the node's failure does not say %q: %v", f.want[c.preset], ev)
				}
				in, out := srv.Total(c.mainOnly)
				switch {
				case f.fail.At == 0:
					if ev.str("tokens") != "" || ev.str("estimated") != "" {
						t.Errorf("a call no model answered was charged tokens: %v", ev)
					}
				case slices.Contains(f.reported, c.preset):
					if got, want := ev.str("tokens"), strconv.FormatInt(in+out, 10); got != want || ev.str("estimated") != "" {
						t.Errorf("tokens recorded %s (estimated %q), want %s as served: %+v", got, ev.str("estimated"), want, srv.Served())
					}
				default:
					if ev.str("estimated") != "true" {
						t.Errorf("tokens not estimated, though %s's report of a failure has none: %v", c.preset, ev)
					}
				}
				if r.took > time.Minute && f.fail.At == 0 {
					t.Errorf("a wrong key took %v to fail", r.took)
				}
				noSecretIn(t, dir, r.out, key)
			})
		}
	}
}

// judgeLoop has a scripted builder fix calc.sh and a judge on preset rule
// on the fix; extra is more of the judge's provider table.
func judgeLoop(preset, extra string) string {
	return `name = "judge-` + preset + `"
objective = "Make the quickstart's tests pass."
[stop]
max_iterations = 1
[providers.fixer]
command = ["sh", "-c", "cat >/dev/null; sed 's/[$]1 - [$]2/$1 + $2/' calc.sh >calc.new && mv calc.new calc.sh"]
[providers.judge]
preset = "` + preset + `"
timeout = "3m"
` + extra + `
[[node]]
name = "fixer"
provider = "fixer"
goals = ["tests"]
[[node]]
name = "review"
role = "judge"
provider = "judge"
after = ["fixer"]
instruction = "Check that add adds."
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
  [[goal.check]]
  type = "judge"
  node = "review"
  min_score = 7
`
}

// verdict is what the judge's model answers.
const verdict = "The change is right: add adds now.\n\n```json\n" +
	`{"verdict":"pass","reason":"add adds its operands","evidence":"calc.sh: echo $(($1 + $2))","score":9}` + "\n```\n"

// TestRealCLIJudges: a judge on each preset's CLI answers with a verdict
// (its model's final text, read back through the CLI's own output format)
// and the gate counts it: the run reaches success on the test and the
// judge's check, and the judge's tokens are those served.
func TestRealCLIJudges(t *testing.T) {
	checkTmp(t)
	for _, c := range realCLIs {
		t.Run(c.preset, func(t *testing.T) {
			t.Parallel()
			realBin(t)
			key := secretValue(t, "sk-")
			dir := t.TempDir()
			srv := modelfake.New(t, modelfake.Script{Steps: []modelfake.Step{{Text: verdict}}})
			seed(t, dir, judgeLoop(c.preset, realTable(c, srv)))
			r := runReal(t, c, srv, key, dir)
			if r.code != exitSuccess {
				t.Fatalf("exit code %d, want %d\n%s\nserved: %+v", r.code, exitSuccess, r.out, srv.Served())
			}
			if want := `judge "review" ruled pass (score 9/10): calc.sh: echo $(($1 + $2))`; !strings.Contains(string(r.out), want) {
				t.Errorf("the gate's evidence does not say %q:\n%s", want, r.out)
			}
			var judged ledgerEvent
			for _, e := range r.events {
				if e.str("type") == "node_succeeded" && e.str("node") == "review" {
					judged = e
				}
			}
			in, out := srv.Total(c.mainOnly)
			if judged == nil || judged.str("tokens") != strconv.FormatInt(in+out, 10) {
				t.Errorf("the judge's call: %v, want %d tokens as served", judged, in+out)
			}
			noSecretIn(t, dir, r.out, key)
		})
	}
}

// TestRealCLIPermissions holds the permission model docs/config.md states
// for the presets to what the CLIs do: the model asks the CLI's shell tool
// for an edit-like command inside the root (sed -i on calc.sh) and for one
// that is not (python3 writing a file), and the test looks at what ran.
// Claude Code's acceptEdits runs the first and refuses the second;
// opencode, with its default permissions, runs both without asking.
func TestRealCLIPermissions(t *testing.T) {
	checkTmp(t)
	sed := `sed -i 's/[$]1 - [$]2/$1 + $2/' calc.sh`
	other := `python3 -c "open('proof.txt', 'w').write('ran')"`
	cases := []struct {
		cli       realCLI
		steps     []modelfake.Step
		sed, more bool // whether each command ran
	}{
		{cli: realCLIs[0], sed: true, more: false, steps: []modelfake.Step{
			{Tool: "Bash", Input: map[string]any{"command": sed, "description": "fix add"}},
			{Tool: "Bash", Input: map[string]any{"command": other, "description": "write a file"}},
			{Text: "Done."},
		}},
		{cli: realCLIs[3], sed: true, more: true, steps: []modelfake.Step{
			{Tool: "bash", Input: map[string]any{"command": sed, "description": "fix add"}},
			{Tool: "bash", Input: map[string]any{"command": other, "description": "write a file"}},
			{Text: "Done."},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.cli.preset, func(t *testing.T) {
			t.Parallel()
			realBin(t)
			dir := project(t, realLoop(tc.cli.preset, ""))
			srv := modelfake.New(t, modelfake.Script{Steps: tc.steps})
			stdout, stderr := callReal(t, tc.cli, srv, "sk-test", dir)
			b, _ := os.ReadFile(filepath.Join(dir, "calc.sh"))
			_, err := os.Stat(filepath.Join(dir, "proof.txt"))
			if got := strings.Contains(string(b), calcFixed); got != tc.sed {
				t.Errorf("sed -i inside the root ran: %v, want %v", got, tc.sed)
			}
			if got := err == nil; got != tc.more {
				t.Errorf("python3 writing a file ran: %v, want %v", got, tc.more)
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}

// TestRealCLIToolsAndTiers holds two more claims of docs/config.md to the
// CLIs: Gemini CLI headless in auto_edit offers its model no shell tool;
// and Codex with its default model already sends low reasoning effort, so
// the preset's cheap tier (model_reasoning_effort="low") is the standard
// tier there.
func TestRealCLIToolsAndTiers(t *testing.T) {
	checkTmp(t)
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		realBin(t)
		dir := project(t, realLoop("gemini", ""))
		srv := modelfake.New(t, modelfake.Script{Steps: []modelfake.Step{{Text: "Nothing to do."}}})
		callReal(t, realCLIs[2], srv, "sk-test", dir)
		offered := 0
		for _, b := range srv.Bodies() {
			var req struct {
				Tools []struct {
					FunctionDeclarations []struct {
						Name string `json:"name"`
					} `json:"functionDeclarations"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(b, &req); err != nil {
				t.Fatal(err)
			}
			for _, tl := range req.Tools {
				for _, f := range tl.FunctionDeclarations {
					offered++
					if strings.Contains(f.Name, "shell") || f.Name == "run_command" {
						t.Errorf("Gemini CLI offers its model the shell tool %q", f.Name)
					}
				}
			}
		}
		if offered == 0 {
			t.Fatal("Gemini CLI offered no tool at all")
		}
	})
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		realBin(t)
		codex := realCLIs[1]
		configure := codex.configure
		codex.configure = func(t *testing.T, home, url, key string) []string {
			env := configure(t, home, url, key)
			path := filepath.Join(home, ".codex", "config.toml")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Codex's own default model: no model in its config.
			writeTestFile(t, path, strings.Replace(string(b), "model = \"gpt-5.5\"\n", "", 1))
			return env
		}
		effort := map[string]string{}
		for _, tier := range []string{loop.TierStandard, loop.TierCheap} {
			dir := project(t, realLoop("codex", ""))
			srv := modelfake.New(t, modelfake.Script{Steps: []modelfake.Step{{Text: "Nothing to do."}}})
			callRealTier(t, codex, srv, "sk-test", dir, tier)
			var req struct {
				Model     string `json:"model"`
				Reasoning struct {
					Effort string `json:"effort"`
				} `json:"reasoning"`
			}
			if bodies := srv.Bodies(); len(bodies) == 0 || json.Unmarshal(bodies[0], &req) != nil {
				t.Fatalf("no request from Codex on the %s tier", tier)
			}
			effort[tier] = req.Model + " " + req.Reasoning.Effort
		}
		if effort[loop.TierStandard] != effort[loop.TierCheap] || !strings.HasSuffix(effort[loop.TierCheap], " low") {
			t.Errorf("reasoning effort by tier %v: want low on both", effort)
		}
		t.Logf("Codex's default model and effort: %s", effort[loop.TierStandard])
	})
}
