package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite golden files and scripts with the current output")

func TestMain(m *testing.M) {
	testscript.Main(cleanupM{m}, map[string]func(){
		"loop-action": main,
		"expect-exit": func() { os.Exit(expectExit()) },
	})
}

// builtDir holds what the tests built (binary_test.go) until their run
// ends.
var builtDir string

// cleanupM removes builtDir after the tests.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	code := c.m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	return code
}

// TestBadConfigs runs validate on every config in testdata/bad and compares
// its output with the golden .out file beside it. Every one must exit 2.
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("../../testdata/bad/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad configs: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".toml"), func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			dir, _ := filepath.Abs(filepath.Dir(f))
			code := run(context.Background(), []string{"-c", name, "validate"}, env{lookup: noEnv, wd: dir}, nil, &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, &stdout, &stderr)
			}
			got := stdout.String() + stderr.String()
			golden := strings.TrimSuffix(f, ".toml") + ".out"
			compareGolden(t, golden, got)
		})
	}
}

func noEnv(string) (string, bool) { return "", false }

func compareGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", golden, diff)
	}
}
