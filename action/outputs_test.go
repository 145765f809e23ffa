package action

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
)

func testJob(t *testing.T, env map[string]string) (*job, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	getenv := func(k string) string { return env[k] }
	a := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&out))
	return &job{a: a, env: Env{Getenv: getenv, Stdout: &out}}, &out
}

func TestOutputRefusesTheDelimiter(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "out")
	j, log := testJob(t, map[string]string{"GITHUB_OUTPUT": file})
	j.output("summary", "fine")
	j.output("evil", "x\n"+delimiter+"\ninjected=true")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "summary<<") || strings.Contains(string(b), "injected") {
		t.Errorf("output file:\n%s", b)
	}
	if !strings.Contains(log.String(), "::warning::output evil not set") {
		t.Errorf("no warning for the refused output:\n%s", log)
	}
}

func TestFileCommandsWithoutTheirFiles(t *testing.T) {
	t.Parallel()
	j, _ := testJob(t, map[string]string{}) // a CLI run: no GITHUB_OUTPUT, no GITHUB_STEP_SUMMARY
	j.output("success", "true")             // go-githubactions would panic on an unset file
	j.summary(Report{Loop: "x"})
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
		if err == nil && len(tt.env) == 0 && (in.Config != ".github/loop.toml" || !in.UploadExport || in.StateBranch != "loop-state" || in.AllowHeadConfig) {
			t.Errorf("defaults: %+v", in)
		}
	}
}
