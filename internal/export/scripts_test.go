package export

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
)

// shells returns the POSIX shells on this machine that run.sh must parse
// with: sh, and dash and bash --posix when present.
func shells(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	for _, sh := range [][]string{{"sh"}, {"dash"}, {"bash", "--posix"}} {
		if p, err := exec.LookPath(sh[0]); err == nil {
			out = append(out, append([]string{p}, sh[1:]...))
		}
	}
	if len(out) == 0 {
		t.Skip("no POSIX shell")
	}
	return out
}

func TestRunShParses(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(script, []byte(runSh), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sh := range shells(t) {
		args := append(append(sh[1:len(sh):len(sh)], "-n"), script)
		if out, err := exec.Command(sh[0], args...).CombinedOutput(); err != nil {
			t.Errorf("%s -n run.sh: %v\n%s", sh, err, out)
		}
	}
	if p, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command(p, "-s", "sh", script).CombinedOutput(); err != nil {
			t.Errorf("shellcheck run.sh: %v\n%s", err, out)
		}
	}
	if !strings.HasPrefix(runSh, "#!/bin/sh\n") || !strings.Contains(runSh, "\nset -eu\n") || strings.Contains(runSh, "\r") {
		t.Error("run.sh must start with #!/bin/sh, set -eu, and use LF line endings")
	}
}

// fakeLoopAction is a loop-action that prints its arguments, one a line,
// and exits 3 so that the exit code is seen to pass through.
const fakeLoopAction = "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\nexit 3\n"

// scriptEnv writes a minimal export (loop.toml and run.sh) under a
// directory whose name has a space, a repository beside it, and a bin
// directory holding a fake loop-action. It returns their real paths.
func scriptEnv(t *testing.T) (export, repo, bin string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	export = filepath.Join(base, "my exports", "x-success")
	repo = filepath.Join(base, "the repo")
	bin = filepath.Join(base, "bin")
	writeTree(t, export, map[string]string{"loop.toml": "name = \"x\"\n"})
	writeTree(t, repo, map[string]string{"README.md": "hi\n"})
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(export, "run.sh"), []byte(runSh), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "loop-action"), []byte(fakeLoopAction), 0o755); err != nil {
		t.Fatal(err)
	}
	return export, repo, bin
}

func TestRunShRunsLoopAction(t *testing.T) {
	t.Parallel()
	sh := shells(t)[0][0]
	export, repo, bin := scriptEnv(t)
	config := filepath.Join(export, "loop.toml")
	tests := []struct {
		name string
		dir  string   // working directory
		argv []string // the command, run.sh included
		want []string // loop-action's arguments
	}{
		{"no arguments: the current directory", repo,
			[]string{sh, filepath.Join(export, "run.sh")},
			[]string{"-C", repo, "--config", config, "run"}},
		{"relative root and run flags", filepath.Dir(repo),
			[]string{sh, filepath.Join(export, "run.sh"), "the repo", "--max-iterations", "2", "--run-id", "a b"},
			[]string{"-C", repo, "--config", config, "run", "--max-iterations", "2", "--run-id", "a b"}},
		{"flags only: the current directory", repo,
			[]string{sh, filepath.Join(export, "run.sh"), "--json"},
			[]string{"-C", repo, "--config", config, "run", "--json"}},
		{"run from its own directory as sh run.sh", export,
			[]string{sh, "run.sh", repo},
			[]string{"-C", repo, "--config", config, "run"}},
		{"executed directly", repo,
			[]string{filepath.Join(export, "run.sh"), "."},
			[]string{"-C", repo, "--config", config, "run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
			cmd.Dir = tt.dir
			cmd.Env = []string{"PATH=" + bin, "HOME=" + repo}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 3 {
				t.Fatalf("run.sh: %v, want loop-action's exit code 3\nstderr: %s", err, stderr.String())
			}
			got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("loop-action arguments (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunShFailures(t *testing.T) {
	t.Parallel()
	sh := shells(t)[0][0]
	export, repo, bin := scriptEnv(t)
	empty := t.TempDir()
	tests := []struct {
		name     string
		path     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"loop-action missing", empty, nil, 127, "run.sh: loop-action is not on PATH"},
		{"empty PATH", "", nil, 127, "run.sh: loop-action is not on PATH"},
		{"root is not a directory", bin, []string{filepath.Join(repo, "README.md")}, 2, "is not a directory"},
		{"root does not exist", bin, []string{filepath.Join(repo, "nope")}, 2, "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(sh, append([]string{filepath.Join(export, "run.sh")}, tt.args...)...)
			cmd.Dir = repo
			cmd.Env = []string{"PATH=" + tt.path}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tt.wantCode {
				t.Fatalf("run.sh: %v, want exit code %d\nstderr: %s", err, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) || stdout.Len() > 0 {
				t.Errorf("stdout %q, stderr %q; want %q on stderr only", stdout.String(), stderr.String(), tt.wantErr)
			}
		})
	}
}

func TestRunCmd(t *testing.T) {
	t.Parallel()
	// Check what Write wrote, not only the constant.
	dir, _, err := Write(t.TempDir(), Input{Config: &loop.Config{Name: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "run.cmd"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if !strings.HasSuffix(s, "\r\n") {
		t.Error("run.cmd does not end with CRLF")
	}
	if n := strings.Count(s, "\n"); n != strings.Count(s, "\r\n") || n != strings.Count(s, "\r") {
		t.Errorf("run.cmd has a line ending other than CRLF")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n")
	if lines[0] != "@echo off" || !strings.Contains(s, "\r\nsetlocal\r\n") {
		t.Errorf("run.cmd must start with @echo off and setlocal")
	}
	if last := lines[len(lines)-1]; last != "exit /b %ERRORLEVEL%" {
		t.Errorf("last line %q, want exit /b %%ERRORLEVEL%%", last)
	}
	if n := len(regexp.MustCompile(`(?i)exit\s+/b`).FindAllString(s, -1)); n != 1 {
		t.Errorf("run.cmd has %d exit /b, want exactly 1", n)
	}
	for _, want := range []string{`-C "%ROOT%"`, `--config "%HERE%loop.toml" run %ARGS%`, "%%~$PATH:I", "cmd /c exit 127"} {
		if !strings.Contains(s, want) {
			t.Errorf("run.cmd lacks %q", want)
		}
	}
}
