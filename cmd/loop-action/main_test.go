package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite golden files and scripts with the current output")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"loop-action": main})
}

// TestScripts drives the real binary with the scripts in testdata/script.
func TestScripts(t *testing.T) {
	golden, err := filepath.Abs("../../testdata/script/golden")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "../../testdata/script",
		UpdateScripts: *update,
		Cmds:          map[string]func(*testscript.TestScript, bool, []string){"cmpnorm": cmpNorm},
		Setup: func(e *testscript.Env) error {
			e.Setenv("NO_COLOR", "1")
			e.Setenv("GOLDEN", golden)
			return nil
		},
	})
}

var durationRE = regexp.MustCompile(`\b\d+\.\ds\b`)

// normalize replaces what differs from run to run (durations) with a fixed
// placeholder, so outputs can be compared with golden files.
func normalize(s string) string { return durationRE.ReplaceAllString(s, "N.Ns") }

// cmpNorm compares a file (or stdout/stderr) with a golden file after
// normalizing durations in the first: cmpnorm stdout $GOLDEN/name.txt.
// With -update it writes the golden file instead.
func cmpNorm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpnorm stdout|stderr|file golden")
	}
	got := normalize(ts.ReadFile(args[0])) // ReadFile reads stdout and stderr by name
	golden := ts.MkAbs(args[1])
	if *update {
		ts.Check(os.WriteFile(golden, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(golden)
	ts.Check(err)
	if diff := cmp.Diff(string(want), got); diff != "" {
		ts.Fatalf("%s differs from %s (-want +got):\n%s", args[0], args[1], diff)
	}
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
