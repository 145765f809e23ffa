package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// TestPreCommitFramework runs this repository's .pre-commit-hooks.yaml
// through the real pre-commit framework: `pre-commit try-repo` on a local
// clone of this checkout's HEAD (the framework builds loop-action from it
// with go install, language: golang, once: a clean clone's environment is
// reused across the three runs — try-repo on a dirty checkout would build
// it for each; commit first to test a change) gates a user
// repository's pushed commit (the framework hands it on in
// PRE_COMMIT_TO_REF) and its staged tree. It needs pre-commit (Debian's
// package; .ci/run installs it) and takes a minute the first time. The
// module and build caches are this machine's, so it builds offline when
// they hold the dependencies.
func TestPreCommitFramework(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the pre-commit framework builds loop-action")
	}
	t.Parallel()
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Skip("pre-commit is not installed (apt-get install pre-commit): the framework integration is not tested")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("%s is not a git checkout: pre-commit try-repo needs one", root)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	env := frameworkEnv(t, ctx)
	clone := filepath.Join(t.TempDir(), "loop-action")
	if out, err := subprocess.Command(ctx, "git", "clone", "-q", "--no-local", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("clone %s: %v\n%s", root, err, out)
	}
	root = clone
	work := t.TempDir()
	sh := func(wantOK bool, name string, args ...string) string {
		t.Helper()
		cmd := subprocess.Command(ctx, name, args...) // pre-commit's go install dies with it
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("%s %s: %v (want success %v)\n%s", name, strings.Join(args, " "), err, wantOK, out)
		}
		return string(out)
	}
	for name, text := range map[string]string{"loop.toml": hookLoop, "test.sh": hookTest, "value.txt": "bad\n"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(true, "git", "init", "-q", "-b", "main")
	sh(true, "git", "add", "-A")
	sh(true, "git", "commit", "-q", "-m", "bad")
	bad := strings.TrimSpace(sh(true, "git", "rev-parse", "HEAD"))

	out := sh(false, "pre-commit", "try-repo", root, "loop-action", "--hook-stage", "push", "--from-ref", bad, "--to-ref", bad, "--verbose")
	wantAll(t, out, "FAIL    test", "value is bad", "the push is refused")

	if err := os.WriteFile(filepath.Join(work, "value.txt"), []byte("good\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh(true, "git", "commit", "-q", "-am", "good")
	good := strings.TrimSpace(sh(true, "git", "rev-parse", "HEAD"))
	out = sh(true, "pre-commit", "try-repo", root, "loop-action", "--hook-stage", "push", "--from-ref", bad, "--to-ref", good, "--verbose")
	wantAll(t, out, "PASS    tests")

	if err := os.WriteFile(filepath.Join(work, "value.txt"), []byte("bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh(true, "git", "add", "value.txt")
	out = sh(false, "pre-commit", "try-repo", root, "loop-action-pre-commit", "--verbose")
	wantAll(t, out, "the staged tree", "value is bad", "the commit is refused")
}

const hookLoop = `name = "demo"

[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
`

const hookTest = `grep -q good value.txt || { echo "--- FAIL: value is $(cat value.txt)"; exit 1; }
`

// frameworkEnv is the environment of the framework test: a home and a
// pre-commit cache of its own, a git identity, and this machine's Go
// module and build caches (pre-commit points GOPATH at its own directory,
// which would move the module cache there).
func frameworkEnv(t *testing.T, ctx context.Context) []string {
	t.Helper()
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "PRE_COMMIT_HOME="+filepath.Join(home, "pre-commit"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
	for _, v := range []string{"GOMODCACHE", "GOCACHE"} {
		out, err := subprocess.Command(ctx, "go", "env", v).Output()
		if err != nil {
			t.Skipf("go env %s: %v: the framework cannot build loop-action", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	return env
}

func wantAll(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
}
