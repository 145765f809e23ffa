package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// TestGateReadsCheckoutSettings: in a checkout that git made with
// core.autocrlf=true in its system configuration (a Windows runner's),
// every text file has CRLF line endings; `loop-action gate` reads the
// setting once and measures the commit's tree, which the status rule
// compares with the head.
func TestGateReadsCheckoutSettings(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	system := filepath.Join(base, "gitconfig")
	if err := os.WriteFile(system, []byte("[core]\n\tautocrlf = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + base, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=" + system,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := subprocess.ForTest(t, "git", args...)
		cmd.Dir, cmd.Env = dir, vars
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	seed := filepath.Join(base, "seed")
	git(base, "init", "-q", "-b", "main", seed)
	files := map[string]string{
		"loop.toml": "name = \"crlf\"\n[stop]\nmax_iterations = 1\n[[goal]]\nname = \"g\"\n  [[goal.check]]\n  type = \"regex\"\n  path = \"notes.txt\"\n  pattern = \"two\"\n",
		"notes.txt": "one\ntwo\n", ".gitignore": ".loop/\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(seed, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(seed, "add", "-A")
	git(seed, "commit", "-q", "-m", "project")
	clone := filepath.Join(base, "clone")
	git(base, "clone", "-q", seed, clone)
	if b, _ := os.ReadFile(filepath.Join(clone, "notes.txt")); string(b) != "one\r\ntwo\r\n" {
		t.Fatalf("the checkout wrote %q; want CRLF", b)
	}
	var stdout, stderr bytes.Buffer
	e := env{lookup: func(string) (string, bool) { return "", false }, vars: vars, wd: clone}
	if code := run(context.Background(), []string{"-c", "loop.toml", "gate", "--json"}, e, nil, &stdout, &stderr); code != exitSuccess {
		t.Fatalf("gate exited %d\n%s%s", code, &stdout, &stderr)
	}
	var v struct{ Snapshot string }
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if tree := git(clone, "rev-parse", "HEAD^{tree}"); v.Snapshot != tree {
		t.Errorf("gate measured snapshot %s, want the commit's tree %s", v.Snapshot, tree)
	}
}
