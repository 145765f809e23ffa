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
// or as the test binary.
var shippedBinary = sync.OnceValues(func() ([]byte, error) {
	exe, err := shippedExe()
	if err != nil {
		return nil, err
	}
	return os.ReadFile(exe)
})

// shippedExe is the path of the file shippedBinary reads. It is written
// by another process (go build), never by this one, and nothing here
// opens it for writing: a file this process wrote is open for writing in
// every child a parallel test forks until that child execs, and running
// it then fails with "text file busy" (ETXTBSY) — which it did in CI,
// when each test copied the binary into its own directory.
var shippedExe = sync.OnceValues(func() (string, error) {
	if !raceDetector {
		return os.Executable()
	}
	dir, err := os.MkdirTemp("", "loop-action-bin-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "loop-action")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build loop-action (shipped by the tests' fake release): %v\n%s", err, b)
	}
	return out, nil
})

// shippedCommand is shippedBinary run as loop-action in dir, with exactly
// env as its environment, killed if ctx ends first.
func shippedCommand(ctx context.Context, t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if !raceDetector {
		return loopAction(ctx, t, dir, env, args...)
	}
	exe, err := shippedExe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
	return cmd
}
