package gate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture is a config with one goal per check kind; each test picks its goal.
const fixture = `
name = "fixture"
[stop]
max_wall_clock = "1h"
[metrics]
command = "sh metrics.sh"
[providers.builder]
command = ["builder"]
[providers.reviewer]
command = ["reviewer"]
[[node]]
name = "fixer"
provider = "builder"
goals = ["judged", "reviewed"]
[[node]]
name = "review"
role = "judge"
provider = "reviewer"
after = ["fixer"]

[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "go test ./..."
  timeout = "2s"
[[goal]]
name = "exit3"
blocking = false
  [[goal.check]]
  type = "command"
  argv = ["sh", "-c", "exit 3"]
  expect_exit = 3
[[goal]]
name = "report"
blocking = false
  [[goal.check]]
  type = "file_exists"
  path = "out/report.md"
  non_empty = true
[[goal]]
name = "changelog"
blocking = false
  [[goal.check]]
  type = "regex"
  path = "CHANGELOG.md"
  pattern = '^## v1\.2'
[[goal]]
name = "coverage"
blocking = false
  [[goal.check]]
  type = "metric"
  name = "coverage"
  op = ">="
  value = 80
[[goal]]
name = "judged"
blocking = false
  [[goal.check]]
  type = "judge"
  node = "review"
  min_score = 7
[[goal]]
name = "reviewed"
blocking = false
  [[goal.check]]
  type = "command"
  run = "true"
  [[goal.check]]
  type = "manual"
  prompt = "Ship it?"
`

func mustConfig(t testing.TB, src string) *loop.Config {
	t.Helper()
	cfg, err := loop.Parse("loop.toml", []byte(src))
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	return cfg
}

// ruling evaluates ev and returns the ruling on the first check of goal.
func ruling(t *testing.T, cfg *loop.Config, goal string, ev Evidence) (Status, string) {
	t.Helper()
	for _, v := range Evaluate(cfg, ev) {
		if v.Goal == goal {
			return v.Checks[0].Status, v.Checks[0].Evidence
		}
	}
	t.Fatalf("no verdict for goal %q", goal)
	return "", ""
}

func cmdEv(goal string, r CommandResult) Evidence {
	return Evidence{Commands: map[CheckID]CommandResult{{Goal: goal, Index: 0}: r}}
}

func TestCommandRulings(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, fixture)
	goTest := CommandResult{Command: "go test ./...", Duration: 4200 * time.Millisecond}
	tests := []struct {
		name   string
		goal   string
		r      *CommandResult
		status Status
		line   string
	}{
		{"pass", "tests", with(goTest, func(r *CommandResult) { r.Tail = "ok  \tpkg\t0.1s\n" }), Pass,
			"`go test ./...` exited 0 after 4.2s"},
		{"fail with the telling line", "tests", with(goTest, func(r *CommandResult) {
			r.ExitCode = 1
			r.Tail = "=== RUN   TestParse\n    parse_test.go:12: got 1\n--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\tpkg\t0.01s\n"
		}), Fail, "`go test ./...` exited 1 (expected 0) after 4.2s: --- FAIL: TestParse (0.00s)"},
		{"fail without a failure word takes the last line", "tests", with(goTest, func(r *CommandResult) {
			r.ExitCode = 2
			r.Tail = "first\n\x1b[31mlast words\x1b[0m\n\n"
		}), Fail, "`go test ./...` exited 2 (expected 0) after 4.2s: last words"},
		{"timeout", "tests", with(goTest, func(r *CommandResult) {
			r.ExitCode, r.TimedOut, r.Duration, r.Signal = -1, true, 2100*time.Millisecond, "killed"
		}), Fail, "`go test ./...` timed out after 2.1s (timeout 2s); its process group was killed"},
		{"stopped by the run", "tests", with(goTest, func(r *CommandResult) {
			r.ExitCode, r.Stopped = -1, "wall-clock budget spent"
		}), Fail, "`go test ./...` was stopped after 4.2s: wall-clock budget spent"},
		{"signal", "tests", with(goTest, func(r *CommandResult) {
			r.ExitCode, r.Signal, r.Tail = -1, "killed", "Killed\n"
		}), Fail, "`go test ./...` was killed by signal killed after 4.2s: Killed"},
		{"cannot start", "tests", with(goTest, func(r *CommandResult) {
			r.ExitCode, r.StartErr = -1, `executable file not found in $PATH`
		}), Fail, "`go test ./...` could not start: executable file not found in $PATH"},
		{"huge output", "tests", with(goTest, func(r *CommandResult) { r.OutputBytes = 10_000_000 }), Pass,
			"`go test ./...` exited 0 after 4.2s, 9.5 MiB of output"},
		{"expected exit 3", "exit3", &CommandResult{Command: "sh -c 'exit 3'", ExitCode: 3, Duration: time.Second}, Pass,
			"`sh -c 'exit 3'` exited 3 after 1.0s"},
		{"exit 0 where 3 expected", "exit3", &CommandResult{Command: "sh -c 'exit 3'", Duration: time.Second, Tail: "fine\n"}, Fail,
			"`sh -c 'exit 3'` exited 0 (expected 3) after 1.0s: fine"},
		{"no evidence fails", "tests", nil, Fail, "no evidence: the command was not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Evidence{}
			if tt.r != nil {
				ev = cmdEv(tt.goal, *tt.r)
			}
			status, line := ruling(t, cfg, tt.goal, ev)
			if diff := cmp.Diff([]string{string(tt.status), tt.line}, []string{string(status), line}); diff != "" {
				t.Errorf("ruling (-want +got):\n%s", diff)
			}
		})
	}
}

func with(r CommandResult, f func(*CommandResult)) *CommandResult {
	f(&r)
	return &r
}

func TestFileRulings(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, fixture)
	changelog := []byte("# Changelog\n\n## v1.2.0 (2026-11-29)\n- faster\n")
	tests := []struct {
		name   string
		goal   string
		r      FileResult
		status Status
		line   string
	}{
		{"exists", "report", FileResult{Path: "out/report.md", Exists: true, Size: 2150}, Pass, "`out/report.md` exists (2.1 KiB)"},
		{"missing", "report", FileResult{Path: "out/report.md"}, Fail, "`out/report.md` does not exist"},
		{"empty", "report", FileResult{Path: "out/report.md", Exists: true}, Fail, "`out/report.md` exists but is empty (non_empty = true)"},
		{"directory", "report", FileResult{Path: "out/report.md", Exists: true, Dir: true, Entries: 2}, Pass, "`out/report.md` exists (directory, 2 entries)"},
		{"empty directory", "report", FileResult{Path: "out/report.md", Exists: true, Dir: true}, Fail, "`out/report.md` is an empty directory (non_empty = true)"},
		{"symlink escape", "report", FileResult{Path: "out/report.md", Escapes: "/etc/passwd"}, Fail,
			"`out/report.md` leads outside the loop root (symlink to /etc/passwd); it is not read"},
		{"unreadable", "report", FileResult{Path: "out/report.md", Err: "permission denied"}, Fail, "`out/report.md` could not be read: permission denied"},
		{"regex match names the line", "changelog", FileResult{Path: "CHANGELOG.md", Exists: true, Content: changelog}, Pass,
			"`CHANGELOG.md` matches /^## v1\\.2/ at line 3: ## v1.2.0 (2026-11-29)"},
		{"regex miss", "changelog", FileResult{Path: "CHANGELOG.md", Exists: true, Content: []byte("# nothing\n")}, Fail,
			"`CHANGELOG.md` has no match for /^## v1\\.2/"},
		{"regex on a missing file", "changelog", FileResult{Path: "CHANGELOG.md"}, Fail, "`CHANGELOG.md` does not exist"},
		{"regex on a directory", "changelog", FileResult{Path: "CHANGELOG.md", Exists: true, Dir: true}, Fail, "`CHANGELOG.md` is a directory, not a file"},
		{"regex on a huge file", "changelog", FileResult{Path: "CHANGELOG.md", Exists: true, Size: 20 << 20, TooLarge: true, ReadLimit: 16 << 20}, Fail,
			"`CHANGELOG.md` is 20 MiB, more than the 16 MiB a regex check reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Evidence{Files: map[CheckID]FileResult{{Goal: tt.goal}: tt.r}}
			status, line := ruling(t, cfg, tt.goal, ev)
			if diff := cmp.Diff([]string{string(tt.status), tt.line}, []string{string(status), line}); diff != "" {
				t.Errorf("ruling (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMetricRulings(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, fixture)
	ok := func(stdout string) *MetricsResult {
		return &MetricsResult{Command: CommandResult{Command: "sh metrics.sh", Stdout: stdout}}
	}
	tests := []struct {
		name   string
		m      *MetricsResult
		status Status
		line   string
	}{
		{"passes", ok(`{"coverage": 82.5}`), Pass, "coverage = 82.5 (>= 80)"},
		{"equal passes", ok(`{"coverage": 80}`), Pass, "coverage = 80 (>= 80)"},
		{"below", ok(`{"coverage": 71.25, "lines": 10}`), Fail, "coverage = 71.25, needs >= 80"},
		{"an object on many lines", ok("{\n  \"coverage\": 90\n}\n"), Pass, "coverage = 90 (>= 80)"},
		{"missing", ok(`{"lines": 10, "files": 2}`), Fail, `metric "coverage" is missing from the metrics (found: files, lines)`},
		{"string", ok(`{"coverage": "82.5"}`), Fail, `metric "coverage" is "82.5", not a number`},
		{"null", ok(`{"coverage": null}`), Fail, `metric "coverage" is null, not a number`},
		{"no JSON", ok("coverage: 82%"), Fail, "metrics: stdout of `sh metrics.sh` is not exactly one JSON object: no JSON object in it, only text, at line 1: coverage: 82%"},
		{"command failed", &MetricsResult{Command: CommandResult{Command: "sh metrics.sh", ExitCode: 1, Duration: 300 * time.Millisecond, Tail: "metrics.sh: line 3: gocov: not found\n"}},
			Fail, "metrics command `sh metrics.sh` exited 1 (expected 0) after 0.3s: metrics.sh: line 3: gocov: not found"},
		{"not run", nil, Fail, "no metrics: the metrics command did not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, line := ruling(t, cfg, "coverage", Evidence{Metrics: tt.m})
			if diff := cmp.Diff([]string{string(tt.status), tt.line}, []string{string(status), line}); diff != "" {
				t.Errorf("ruling (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOverallSuccess(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, `
name = "x"
[stop]
max_tokens = 10
[[goal]]
name = "a"
  [[goal.check]]
  type = "file_exists"
  path = "a"
[[goal]]
name = "b"
  [[goal.check]]
  type = "file_exists"
  path = "b"
[[goal]]
name = "c"
blocking = false
  [[goal.check]]
  type = "file_exists"
  path = "c"
`)
	files := func(exist ...string) Evidence {
		ev := Evidence{Files: map[CheckID]FileResult{}}
		for _, g := range []string{"a", "b", "c"} {
			ev.Files[CheckID{Goal: g}] = FileResult{Path: g, Exists: contains(exist, g), Size: 1}
		}
		return ev
	}
	tests := []struct {
		exist []string
		rate  float64
		want  bool
	}{
		{[]string{"a", "b"}, 1, true},
		{[]string{"a", "b", "c"}, 1, true},
		{[]string{"a", "c"}, 1, false},
		{nil, 1, false},
		{[]string{"a"}, 0.5, true},
		{[]string{"c"}, 0.5, false},
	}
	for _, tt := range tests {
		cfg.Success.MinPassRate = tt.rate
		got := OverallSuccess(cfg, Evaluate(cfg, files(tt.exist...)))
		if got != tt.want {
			t.Errorf("files %v, min_pass_rate %g: success = %v, want %v", tt.exist, tt.rate, got, tt.want)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// TestVerdictsGolden evaluates the fixture with a full set of evidence and
// compares every verdict, as JSON, with testdata/verdicts.golden.json.
func TestVerdictsGolden(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, fixture)
	ev := Evidence{
		Commands: map[CheckID]CommandResult{
			{Goal: "tests"}:              {Command: "go test ./...", ExitCode: 1, Duration: 4200 * time.Millisecond, Tail: "--- FAIL: TestParse (0.00s)\n"},
			{Goal: "exit3"}:              {Command: "sh -c 'exit 3'", ExitCode: 3, Duration: time.Second},
			{Goal: "reviewed", Index: 0}: {Command: "true", Duration: 10 * time.Millisecond},
		},
		Files: map[CheckID]FileResult{
			{Goal: "report"}:    {Path: "out/report.md", Exists: true, Size: 12},
			{Goal: "changelog"}: {Path: "CHANGELOG.md", Exists: true, Content: []byte("## v1.2.0\n")},
		},
		Metrics:   &MetricsResult{Command: CommandResult{Command: "sh metrics.sh", Stdout: `{"coverage": 79.9}`}},
		Judges:    map[string]JudgeResult{"review": {Node: "review", Provider: "reviewer", Answers: []string{"Looks fine.\n```json\n{\"verdict\":\"pass\",\"reason\":\"ok\",\"evidence\":\"parse_test.go:12 asserts the fix\",\"score\":8}\n```"}}},
		Decisions: []Decision{{Goal: "reviewed", Approved: true, By: "alice", Snapshot: "0123456789abcdef0123456789abcdef01234567"}},
		Snapshot:  "0123456789abcdef0123456789abcdef01234567",
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Evaluate(cfg, ev)); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	const golden = "testdata/verdicts.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("verdicts differ from %s (-want +got):\n%s", golden, diff)
	}
}
