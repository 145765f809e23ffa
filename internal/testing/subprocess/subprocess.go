// Package subprocess starts the processes tests run, each bounded: it
// ends with the test's context, taking with it every process it started
// that stayed in its process group, and its Wait returns soon after even
// when a process it left behind still holds its output pipe. It never
// decides a test's outcome by time: the bound is only there so that a
// hung child fails the test instead of outlasting go test's timeout.
package subprocess

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// WaitDelay is how long Wait waits, after the process ended or was
// killed, for the pipes that copy its output to close.
const WaitDelay = 5 * time.Second

// Command is exec.CommandContext bounded by ctx (see Bound).
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return Bound(exec.CommandContext(ctx, name, args...))
}

// Bound makes cmd, made by exec.CommandContext, the leader of its own
// process group, killed with all of it when the context ends (a
// go build a shell step started dies with the shell), and gives its Wait
// WaitDelay to collect the output of whatever escaped the group.
func Bound(cmd *exec.Cmd) *exec.Cmd {
	group(cmd)
	cmd.WaitDelay = WaitDelay
	return cmd
}

// TestBound bounds a command started by ForTest.
const TestBound = 2 * time.Minute

// ForTest is Command bounded by TestBound, for the short commands a test
// runs (git, go env). The bound is not tb's context, which ends before
// tb's cleanups, some of which run git.
func ForTest(tb testing.TB, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), TestBound)
	tb.Cleanup(cancel)
	return Command(ctx, name, args...)
}
