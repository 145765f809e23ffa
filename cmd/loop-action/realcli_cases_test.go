//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/testing/modelfake"
)

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
				if r.took > 2*time.Minute && f.fail.At == 0 {
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
