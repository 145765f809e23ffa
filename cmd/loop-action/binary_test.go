//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// shippedBinary is the loop-action the fake release ships and the
// emulated workflows run (workflowworld_test.go): the test binary itself,
// which runs main when called loop-action — or, when the tests run with
// the race detector, loop-action built without it. Those workflows start
// loop-action dozens of times, each about three times slower under the
// detector, which made the package's tests outlast go test's default
// timeout on 2 cores; every other test here still races main, in process
// or as the test binary. The built binary is read once and removed: the
// bytes are what is shipped (shippedPath writes them where a test needs a
// file).
var shippedBinary = sync.OnceValues(func() ([]byte, error) {
	if !raceDetector {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return os.ReadFile(exe)
	}
	dir, err := os.MkdirTemp("", "loop-action-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "loop-action")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build loop-action (shipped by the tests' fake release): %v\n%s", err, b)
	}
	return os.ReadFile(out)
})

// shippedCommand is shippedBinary run as loop-action in dir, with exactly
// env as its environment, killed if ctx ends first.
func shippedCommand(ctx context.Context, t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if !raceDetector {
		return loopAction(ctx, t, dir, env, args...)
	}
	bin, err := shippedBinary()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "loop-action")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
	return cmd
}
