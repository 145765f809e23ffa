//go:build linux

package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/modelfake"
)

// openaiQuickstart is the quickstart loop with an openai builder: it sees
// calc.sh in its prompt and answers with a SEARCH/REPLACE edit.
const openaiQuickstart = `name = "quickstart-api"
objective = "Make the quickstart's tests pass."
[stop]
max_iterations = 2
[context]
files = ["calc.sh"]
[providers.api]
type = "openai"
base_url = "%URL%"
model = "gpt-test"
api_key_env = "TEST_OPENAI_KEY"
[[node]]
name = "fixer"
provider = "api"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
[export]
paths = ["calc.sh"]
`

const calcFix = "calc.sh\n```sh\n<<<<<<< SEARCH\n\techo $(($1 - $2))\n=======\n\techo $(($1 + $2))\n>>>>>>> REPLACE\n```\n"

// noSecretIn fails when secret appears in out or in any file below dir:
// the ledger, the run log, the checkpoint, the history, the export.
func noSecretIn(t *testing.T, dir string, out []byte, secret string) {
	t.Helper()
	if bytes.Contains(out, []byte(secret)) {
		t.Errorf("the output holds the key:\n%s", out)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenAIRunConvergesAndKeepsTheKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), hostileBound)
	defer cancel()
	key := secretValue(t, "sk-")
	srv := modelfake.Replies(t)
	srv.Otherwise = func(r modelfake.Request) modelfake.Reply {
		// A careless endpoint that quotes the key back in its answer.
		return modelfake.Completion("Key "+key+" accepted.\n\n"+calcFix, 1200, 80)
	}
	dir := project(t, strings.ReplaceAll(openaiQuickstart, "%URL%", srv.BaseURL()))
	out, err := loopAction(ctx, t, dir, append(baseEnv(t), "TEST_OPENAI_KEY="+key), "run").CombinedOutput()
	if code := hostileExit(ctx, t, err, out); code != exitSuccess {
		t.Fatalf("exit code %d, want %d\n%s", code, exitSuccess, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "calc.sh")); err != nil || !strings.Contains(string(b), "$(($1 + $2))") {
		t.Errorf("calc.sh was not fixed: %q, %v", b, err)
	}
	if !strings.Contains(string(out), "1280 tokens") {
		t.Errorf("the output does not report the reply's 1280 tokens:\n%s", out)
	}
	noSecretIn(t, dir, out, key)
}

func TestOpenAIWrongKeyEndsTheRunClearly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), hostileBound)
	defer cancel()
	key := secretValue(t, "sk-")
	srv := modelfake.Replies(t)
	srv.Otherwise = func(modelfake.Request) modelfake.Reply {
		return modelfake.Error(401, "Incorrect API key provided: "+key, nil)
	}
	dir := project(t, strings.ReplaceAll(openaiQuickstart, "%URL%", srv.BaseURL()))
	out, err := loopAction(ctx, t, dir, append(baseEnv(t), "TEST_OPENAI_KEY="+key), "run").CombinedOutput()
	if code := hostileExit(ctx, t, err, out); code != exitUnsuccessful {
		t.Errorf("exit code %d, want %d (not success, not a config error)\n%s", code, exitUnsuccessful, out)
	}
	if want := `refused the API key in TEST_OPENAI_KEY (401 Unauthorized)`; !strings.Contains(string(out), want) {
		t.Errorf("the output does not say %q:\n%s", want, out)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: a refused key is not retried", n)
	}
	noSecretIn(t, dir, out, key)
}
