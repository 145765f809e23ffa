//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// hostileBound bounds every hostile run: a run that hangs fails the test.
const hostileBound = 2 * time.Minute

// loopAction is the test binary run as loop-action in dir, with exactly
// env as its environment (testscript.Main runs main when argv[0] is
// loop-action), killed if ctx ends first.
func loopAction(ctx context.Context, t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := subprocess.Command(ctx, exe, args...)
	cmd.Args[0] = "loop-action"
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// hostileExit is the exit code of a finished command, failing the test when
// it did not run to its end (ctx ran out: it hung).
func hostileExit(ctx context.Context, t *testing.T, err error, out []byte) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("loop-action did not finish within %v: %v\n%s", hostileBound, err, out)
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("loop-action: %v\n%s", err, out)
	return -1
}

// project writes the quickstart (calc.sh with its bug, test.sh), the
// scripted agents and loop.toml into a new directory.
func project(t *testing.T, loopToml string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"calc.sh", "test.sh"} {
		b, err := os.ReadFile(filepath.Join("../../examples/quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(dir, f), string(b))
	}
	if err := copyDir("../../testdata/agents", filepath.Join(dir, "agents")); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "loop.toml"), loopToml)
	return dir
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// baseEnv is a minimal environment: PATH, a HOME of its own, no colour.
func baseEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}
}

// fifoLoop has a builder that replaces the report a regex check reads
// with a FIFO nobody writes to.
const fifoLoop = `name = "fifo"
[stop]
max_iterations = 1
[providers.script]
command = ["sh", "-c", "cat >/dev/null; mkdir -p out; rm -f out/report.md; mkfifo out/report.md"]
[[node]]
name = "jammer"
provider = "script"
goals = ["report"]
[[goal]]
name = "report"
  [[goal.check]]
  type = "regex"
  path = "out/report.md"
  pattern = "fixed"
`

// TestFIFOCheckDoesNotHang: a check whose file an agent replaced with a
// FIFO fails with clear evidence, and the run ends; before, reading it
// blocked in open(2) past every deadline.
func TestFIFOCheckDoesNotHang(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), hostileBound)
	defer cancel()
	dir := project(t, fifoLoop)
	out, err := loopAction(ctx, t, dir, baseEnv(t), "run").CombinedOutput()
	if code := hostileExit(ctx, t, err, out); code != exitUnsuccessful {
		t.Errorf("exit code %d, want %d\n%s", code, exitUnsuccessful, out)
	}
	if want := "`out/report.md` could not be read: not a regular file"; !strings.Contains(string(out), want) {
		t.Errorf("output does not say %q:\n%s", want, out)
	}
}

// secretValue is a random secret with prefix, in the form thief.sh hunts.
func secretValue(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + "SECRET" + hex.EncodeToString(b)
}

// actionSecrets are the secrets the Actions runner passes an action, with
// random values.
func actionSecrets(t *testing.T) map[string]string {
	return map[string]string{
		"INPUT_GITHUB-TOKEN":             secretValue(t, "ghs_"),
		"ACTIONS_RUNTIME_TOKEN":          secretValue(t, "eyJ"),
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": secretValue(t, "eyJ"),
		"ACTIONS_ID_TOKEN_REQUEST_URL":   "http://127.0.0.1:1/token?api-version=2.0&t=" + secretValue(t, "eyJ"),
	}
}

// thiefLoop runs testdata/agents/thief.sh once.
const thiefLoop = `name = "thief"
[stop]
max_iterations = 1
[providers.script]
command = ["sh", "agents/thief.sh"]
[[node]]
name = "looker"
provider = "script"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
`

// TestRunSecretsOutOfReach runs `loop-action run` with the secrets of an
// action in its environment and a root agent that hunts for them. The
// runner's initial environment no longer holds them (it re-executed
// itself, keeping its pid), the agent does not inherit them, and it can
// read neither the runner's environment nor its memory. Without secrets
// the runner still re-executes itself, to confine itself (process.Exec),
// and the agent still cannot read it.
func TestRunSecretsOutOfReach(t *testing.T) {
	t.Parallel()
	for _, withSecrets := range []bool{true, false} {
		t.Run(fmt.Sprintf("secrets=%v", withSecrets), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), hostileBound)
			defer cancel()
			dir := project(t, thiefLoop)
			loot := filepath.Join(t.TempDir(), "loot")
			secrets := map[string]string{}
			if withSecrets {
				secrets = actionSecrets(t)
			}
			hunt(ctx, t, dir, baseEnv(t), loot, secrets, "run")
		})
	}
}

// hunt runs loop-action with args in dir, with env, the secrets and LOOT
// (where thief.sh leaves what it found) in its environment, while the
// agent hunts for them: it checks the runner as watchRunner does, that
// the run is unsuccessful, and what the agent found. It returns the
// output.
func hunt(ctx context.Context, t *testing.T, dir string, env []string, loot string, secrets map[string]string, args ...string) *strings.Builder {
	t.Helper()
	env = append(env, "LOOT="+loot)
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	cmd := loopAction(ctx, t, dir, env, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchRunner(ctx, t, cmd, loot, secrets)
	if code := hostileExit(ctx, t, cmd.Wait(), []byte(out.String())); code != exitUnsuccessful {
		t.Errorf("exit code %d, want %d\n%s", code, exitUnsuccessful, &out)
	}
	checkLoot(t, loot, secrets)
	return &out
}

// watchRunner waits until thief.sh runs, checks that the runner it names
// is cmd's process (the re-execution kept the pid) and that its initial
// environment holds none of the secrets, and lets the agent finish.
func watchRunner(ctx context.Context, t *testing.T, cmd *exec.Cmd, loot string, secrets map[string]string) {
	t.Helper()
	defer writeTestFile(t, loot+".go", "")
	var pid int
	for pid == 0 {
		b, _ := os.ReadFile(loot + ".pid")
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		select {
		case <-ctx.Done():
			t.Fatalf("the agent did not run within %v", hostileBound)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if pid != cmd.Process.Pid {
		t.Errorf("the agent's parent is %d, want the runner %d", pid, cmd.Process.Pid)
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Logf("cannot read the runner's environment to check it (not root?): %v", err)
		return
	}
	for k, v := range secrets {
		if strings.Contains(string(environ), v) {
			t.Errorf("the runner's initial environment still holds %s", k)
		}
	}
}

// secretRE matches what thief.sh hunts for.
var secretRE = regexp.MustCompile(`ghs_[A-Za-z0-9]+|eyJ[A-Za-z0-9]+`)

// checkLoot fails the test if thief.sh found any secret, or could open
// any of the runner's environ, maps and mem.
func checkLoot(t *testing.T, loot string, secrets map[string]string) {
	t.Helper()
	found, err := os.ReadFile(loot)
	if err != nil {
		t.Fatalf("the agent wrote no loot: %v", err)
	}
	for k, v := range secrets {
		if strings.Contains(string(found), secretRE.FindString(v)) {
			t.Errorf("the agent found %s", k)
		}
	}
	if readable, err := os.ReadFile(loot + ".readable"); err == nil {
		t.Errorf("the agent could read the runner's %s", strings.Fields(string(readable)))
	}
}

// TestHandover: a re-executed loop-action takes its secrets over from the
// descriptor its first execution left it; when it cannot, or finds them
// still in its environment, it stops at once with a clear error.
func TestHandover(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fd      string // the handover variable's value
		payload string // what descriptor 3 holds
		env     []string
		code    int
		want    string
	}{
		{"handed over", "3", "INPUT_GITHUB-TOKEN=ghs_y\x00", nil, exitSuccess, "loop-action "},
		{"not a descriptor", "x", "", nil, exitInternal, `loop-action: take over the secrets of the first execution: LOOP_ACTION_SECRETS_FD="x" is not a descriptor`},
		{"closed descriptor", "99", "", nil, exitInternal, "loop-action: take over the secrets of the first execution: read descriptor 99: "},
		{"malformed", "3", "HOME=/\x00", nil, exitInternal, `loop-action: take over the secrets of the first execution: malformed secret handover near "HOME"`},
		{"secrets left", "3", "INPUT_GITHUB-TOKEN=ghs_y\x00", []string{"INPUT_GITHUB-TOKEN=ghs_x"}, exitInternal, "loop-action: 1 secrets are still in the environment after the handover"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), hostileBound)
			defer cancel()
			payload := filepath.Join(t.TempDir(), "payload")
			writeTestFile(t, payload, tt.payload)
			f, err := os.Open(payload)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd := loopAction(ctx, t, t.TempDir(), append(append(baseEnv(t), handoverVar+"="+tt.fd), tt.env...), "version")
			cmd.ExtraFiles = []*os.File{f}
			out, err := cmd.CombinedOutput()
			if code := hostileExit(ctx, t, err, out); code != tt.code || !strings.HasPrefix(string(out), tt.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d and output starting %q", code, out, tt.code, tt.want)
			}
		})
	}
}

// TestActionSecretsOutOfReach runs `loop-action action` as the Actions
// runner starts it, on workflow_dispatch, with the secrets in its
// environment and a root agent that hunts for them: the agent finds none
// and can read none of the runner's environ, maps and mem, the runner's
// initial environment holds none, and yet the action used its token (the
// state branch, served over HTTP for that token only, has the run).
func TestActionSecretsOutOfReach(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), hostileBound)
	defer cancel()
	secrets := actionSecrets(t)
	token := secrets["INPUT_GITHUB-TOKEN"]
	w := newActionWorld(t, token)
	loot := filepath.Join(t.TempDir(), "loot")
	out := hunt(ctx, t, w.workspace, w.env(t), loot, secrets, "action")
	if _, err := subprocess.ForTest(t, "git", "--git-dir", w.bare, "rev-parse", "--verify", "-q", "loop-state").Output(); err != nil {
		t.Errorf("the state branch was not pushed with the token: %v\n%s", err, out)
	}
}
