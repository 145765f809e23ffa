package action

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
)

func testJob(t *testing.T, env map[string]string) (*job, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	getenv := func(k string) string { return env[k] }
	a := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&out))
	return &job{a: a, env: Env{Getenv: getenv, Stdout: &out}}, &out
}

// TestOutputDelimiterIsRandom: values that hold go-githubactions' fixed
// delimiter, or a line that looks like the toolkit's, come back exactly as
// written, each output with a delimiter of its own.
func TestOutputDelimiterIsRandom(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "out")
	j, log := testJob(t, map[string]string{"GITHUB_OUTPUT": file})
	values := [][2]string{
		{"summary", "fine"},
		{"evil", "x\n_GitHubActionsFileCommandDelimeter_\nsuccess=true"},
		{"sly", "ghadelimiter_0123\nsuccess<<EOF\ntrue\nEOF"},
		{"empty", ""},
	}
	for _, v := range values {
		j.pub().output(v[0], v[1])
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseFileCommand(string(b))
	if err != nil {
		t.Fatalf("the runner would refuse the file: %v\n%s", err, b)
	}
	if diff := cmp.Diff(values, got); diff != "" {
		t.Errorf("outputs as the runner reads them (-want +got):\n%s", diff)
	}
	delims := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if _, d, ok := strings.Cut(line, "<<"); ok && strings.HasPrefix(d, "ghadelimiter_") && len(d) == len("ghadelimiter_")+32 {
			delims[d] = true
		}
	}
	if len(delims) != len(values) {
		t.Errorf("%d distinct random delimiters for %d outputs:\n%s", len(delims), len(values), b)
	}
	if log.Len() != 0 {
		t.Errorf("warnings: %s", log)
	}
}

// parseFileCommand reads a file command's file as the Actions runner does
// (FileCommandManager): "name=value" lines, and "name<<DELIM" heredocs that
// run to a line equal to DELIM. Malformed content is an error, as it is
// for the runner.
func parseFileCommand(s string) ([][2]string, error) {
	var out [][2]string
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq, hd := strings.Index(line, "="), strings.Index(line, "<<")
		switch {
		case eq >= 0 && (hd < 0 || eq < hd):
			out = append(out, [2]string{line[:eq], line[eq+1:]})
		case hd > 0 && hd+2 < len(line):
			name, delim := line[:hd], line[hd+2:]
			var val []string
			for i++; ; i++ {
				if i == len(lines) {
					return out, fmt.Errorf("matching delimiter %q not found", delim)
				}
				if lines[i] == delim {
					break
				}
				val = append(val, lines[i])
			}
			out = append(out, [2]string{name, strings.Join(val, "\n")})
		default:
			return out, fmt.Errorf("invalid format %q", line)
		}
	}
	return out, nil
}

func TestFileCommandsWithoutTheirFiles(t *testing.T) {
	t.Parallel()
	j, _ := testJob(t, map[string]string{}) // a CLI run: no GITHUB_OUTPUT, no GITHUB_STEP_SUMMARY
	j.pub().output("success", "true")       // go-githubactions would panic on an unset file
	j.pub().summary(Report{Loop: "x"})
}

func TestReadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env     map[string]string
		wantErr string
	}{
		{map[string]string{}, ""},
		{map[string]string{"INPUT_UPLOAD-EXPORT": "yes"}, `input upload-export: "yes" is neither true nor false`},
		{map[string]string{"INPUT_MAX-ITERATIONS": "-1"}, `input max-iterations: "-1" is not a whole number of 0 or more`},
		{map[string]string{"INPUT_COMMENT": "FALSE", "INPUT_MAX-ITERATIONS": "4"}, ""},
		{map[string]string{"INPUT_DELIVER": "Pull-Request", "INPUT_PUSH-TOKEN": "ghp_x"}, ""},
		{map[string]string{"INPUT_DELIVER": "force-push"}, `input deliver: "force-push" is not one of auto, push, pull-request, comment, none`},
	}
	for _, tt := range tests {
		j, _ := testJob(t, tt.env)
		in, err := readInputs(j.a)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tt.wantErr {
			t.Errorf("readInputs(%v) error %q, want %q", tt.env, msg, tt.wantErr)
		}
		if err == nil && len(tt.env) == 0 && (in.Config != ".github/loop.toml" || !in.UploadExport || in.StateBranch != "loop-state" || in.AllowHeadConfig || in.Deliver != DeliverAuto) {
			t.Errorf("defaults: %+v", in)
		}
		if tt.env["INPUT_PUSH-TOKEN"] != "" && (in.Deliver != DeliverPullRequest || in.PushToken != "ghp_x") {
			t.Errorf("deliver %q, push-token %q", in.Deliver, in.PushToken)
		}
	}
}

// TestPushTokenNeverReachesAgents: push-token is masked in the job log and
// left out of the environment agents and checks get, with every input.
func TestPushTokenNeverReachesAgents(t *testing.T) {
	t.Parallel()
	environ := []string{"INPUT_PUSH-TOKEN=ghp_secret-push", "INPUT_GITHUB-TOKEN=ghs_x", "PATH=/bin",
		"ACTIONS_RUNTIME_TOKEN=rt", "ACTIONS_RUNTIME_URL=https://r", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=idt",
		"ACTIONS_ID_TOKEN_REQUEST_URL=https://id", "ACTIONS_RESULTS_URL=https://results"}
	if got := agentEnviron(environ); !cmp.Equal(got, []string{"PATH=/bin"}) {
		t.Errorf("agents get %q", got)
	}
	env := map[string]string{"INPUT_PUSH-TOKEN": "ghp_secret-push", "GITHUB_EVENT_NAME": "schedule", "GITHUB_REPOSITORY": "o/r"}
	env["GITHUB_EVENT_PATH"] = filepath.Join(t.TempDir(), "event.json")
	writeFile(t, env["GITHUB_EVENT_PATH"], "{}")
	var log bytes.Buffer
	a := githubactions.New(githubactions.WithGetenv(func(k string) string { return env[k] }), githubactions.WithWriter(&log))
	j, err := newJob(a, Env{Getenv: func(k string) string { return env[k] }, Stdout: &log, Environ: environ})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "::add-mask::ghp_secret-push\n") || j.mask("x ghp_secret-push y") != "x *** y" {
		t.Errorf("push-token is not masked:\n%s", log.String())
	}
}

// TestActionYAMLDeclaresInputsAndOutputs: every input the action reads
// and every output it sets, in either mode, is declared in action.yml,
// and nothing more.
func TestActionYAMLDeclaresInputsAndOutputs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{}
	section := ""
	for line := range strings.Lines(string(b)) {
		switch {
		case !strings.HasPrefix(line, " "):
			section = strings.TrimSuffix(strings.TrimSpace(line), ":")
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && strings.HasSuffix(strings.TrimSpace(line), ":"):
			declared[section] = append(declared[section], strings.TrimSuffix(strings.TrimSpace(line), ":"))
		}
	}
	var read []string
	a := githubactions.New(githubactions.WithGetenv(func(k string) string {
		read = append(read, strings.ToLower(strings.TrimPrefix(k, "INPUT_")))
		return ""
	}))
	if _, err := readInputs(a); err != nil {
		t.Fatal(err)
	}
	j, _ := testJob(t, map[string]string{"GITHUB_OUTPUT": filepath.Join(t.TempDir(), "set_output")})
	j.pub().outputs(&session{cfg: &loop.Config{Name: "x"}}, runner.Outcome{}, Report{}, delivery{})
	j.ctx = &githubactions.GitHubContext{EventName: "schedule", SHA: "eeee000000000000000000000000000000000001"}
	if err := j.authorizeJob(t.Context()); err != nil { // the authorize mode's outputs
		t.Fatal(err)
	}
	set := slices.Sorted(maps.Keys(outputs(t, filepath.Dir(j.env.Getenv("GITHUB_OUTPUT")))))
	for _, c := range []struct {
		what      string
		got, want []string
	}{{"inputs", slices.Sorted(slices.Values(read)), slices.Sorted(slices.Values(declared["inputs"]))}, {"outputs", set, slices.Sorted(slices.Values(declared["outputs"]))}} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-action.yml +code):\n%s", c.what, diff)
		}
	}
}
