//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
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

// shippedExe is the path of the file shippedBinary reads: the test binary,
// or builtLoopAction, whose file no process of the tests writes.
var shippedExe = sync.OnceValues(func() (string, error) {
	if !raceDetector {
		return os.Executable()
	}
	return builtLoopAction()
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
	cmd := subprocess.Command(ctx, exe, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}
