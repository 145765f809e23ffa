//go:build unix

package process

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// eventually bounds runs that move megabytes: how long they take depends on
// the machine, only hanging would be a bug.
const eventually = 60 * time.Second

// runTimed runs spec with t's context and fails the test if Run takes longer
// than promptly.
func runTimed(t *testing.T, spec Spec) Result {
	t.Helper()
	return runWithin(t, t.Context(), spec, promptly)
}

// runTimedCtx is runTimed with a context of the test's choosing.
func runTimedCtx(t *testing.T, ctx context.Context, spec Spec) Result {
	t.Helper()
	return runWithin(t, ctx, spec, promptly)
}

// runWithin runs spec and fails the test if Run takes longer than bound. A
// deadline of twice the bound makes a bug fail the test instead of hanging.
func runWithin(t *testing.T, ctx context.Context, spec Spec, bound time.Duration) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*bound)
	defer cancel()
	start := time.Now()
	res := Run(ctx, spec)
	if elapsed := time.Since(start); elapsed > bound {
		t.Errorf("Run(%s) took %v, want < %v", Quote(spec.Argv), elapsed, bound)
	}
	return res
}

// pidsIn parses every word of out as an int (pids the script printed).
func pidsIn(t *testing.T, out []byte) []int {
	t.Helper()
	var ns []int
	for _, word := range strings.Fields(string(out)) {
		n, err := strconv.Atoi(word)
		if err != nil {
			t.Fatalf("%q in output %q is not a pid: %v", word, out, err)
		}
		ns = append(ns, n)
	}
	if len(ns) == 0 {
		t.Fatalf("no pid in output %q", out)
	}
	return ns
}

// waitAllGone checks that the group whose leader printed its pid ($$) first
// in out, and every process whose pid ($!) follows, are gone. Checking the
// pids too catches processes that were never in the group.
func waitAllGone(t *testing.T, out []byte) {
	t.Helper()
	pids := pidsIn(t, out)
	waitGone(t, -pids[0])
	for _, pid := range pids[1:] {
		waitGone(t, pid)
	}
}

// waitGone polls kill(pid, 0) until it fails with ESRCH; pid may be a
// negative process group id. Orphans are reaped by init, which may take a
// moment, and a zombie still counts, hence the polling.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(promptly)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // don't leave it behind
			t.Fatalf("kill(%d, 0) = %v after %v, want ESRCH", pid, err, promptly)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupScript starts two background grandchildren, prints the group id and
// their pids, and waits for them.
const groupScript = "sleep 30 & a=$!; sleep 30 & echo $$ $a $!; wait"

func TestTimeoutKillsWholeGroup(t *testing.T) {
	t.Parallel()
	res := runTimed(t, Spec{Argv: ShellArgv(groupScript), Timeout: 200 * time.Millisecond})
	if !res.TimedOut || res.Canceled || res.OK() {
		t.Errorf("TimedOut=%v Canceled=%v OK=%v, want true false false", res.TimedOut, res.Canceled, res.OK())
	}
	waitAllGone(t, res.Stdout)
}

func TestCancelKillsWholeGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res := runTimedCtx(t, ctx, Spec{Argv: ShellArgv(groupScript), StdoutTee: cancelOnOutput{cancel}})
	if res.TimedOut || !res.Canceled {
		t.Errorf("TimedOut=%v Canceled=%v, want false true", res.TimedOut, res.Canceled)
	}
	waitAllGone(t, res.Stdout)
}

// cancelOnOutput is a StdoutTee that cancels a context when the first stdout
// bytes arrive: scripts print once they are ready to be interrupted, so no
// test depends on how fast a shell starts.
type cancelOnOutput struct{ cancel context.CancelFunc }

func (c cancelOnOutput) Write(p []byte) (int, error) {
	c.cancel()
	return len(p), nil
}

// TestTermReachesGroupFirst: the shell's foreground child must get SIGTERM
// too (or the shell would wait for it until the very long grace ends), and
// the shell's TERM trap must run (so SIGTERM, not SIGKILL, came first).
func TestTermReachesGroupFirst(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res := runTimedCtx(t, ctx, Spec{
		Argv:      ShellArgv(`trap 'echo got-term; exit 7' TERM; sh -c 'echo ready; exec sleep 30'`),
		KillGrace: time.Minute,
		StdoutTee: cancelOnOutput{cancel},
	})
	if diff := cmp.Diff("ready\ngot-term\n", string(res.Stdout)); diff != "" {
		t.Errorf("Stdout mismatch (-want +got):\n%s", diff)
	}
	if res.ExitCode != 7 || res.Signal != "" || !res.Canceled {
		t.Errorf("ExitCode=%d Signal=%q Canceled=%v, want 7 \"\" true", res.ExitCode, res.Signal, res.Canceled)
	}
}

// TestIgnoredTermIsKilledAfterGrace: a shell and its child that both ignore
// SIGTERM are killed with SIGKILL once the grace period has passed.
func TestIgnoredTermIsKilledAfterGrace(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res := runTimedCtx(t, ctx, Spec{
		Argv:      ShellArgv(`trap "" TERM; sleep 30 & echo $$ $!; wait`),
		KillGrace: grace,
		StdoutTee: cancelOnOutput{cancel},
	})
	if res.ExitCode != -1 || res.Signal != "killed" || !res.Canceled {
		t.Errorf("ExitCode=%d Signal=%q Canceled=%v, want -1 \"killed\" true", res.ExitCode, res.Signal, res.Canceled)
	}
	if res.Duration < grace {
		t.Errorf("Duration = %v, want at least the grace period %v (SIGKILL came early)", res.Duration, grace)
	}
	waitAllGone(t, res.Stdout)
}

// TestLeftoversKilledAfterNormalExit: a background grandchild holding stdout
// neither delays Run nor survives it.
func TestLeftoversKilledAfterNormalExit(t *testing.T) {
	t.Parallel()
	res := runTimed(t, Spec{Argv: ShellArgv("sleep 30 & echo $$ $!; echo done")})
	if !res.OK() {
		t.Errorf("OK() = false: %+v", res)
	}
	pids, done := bytes.CutSuffix(res.Stdout, []byte("done\n"))
	if !done {
		t.Errorf("Stdout = %q, want it to end with done", res.Stdout)
	}
	waitAllGone(t, pids)
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		wantCode int
		wantSig  string
	}{
		{name: "zero", script: "exit 0", wantCode: 0},
		{name: "one", script: "exit 1", wantCode: 1},
		{name: "forty-two", script: "exit 42", wantCode: 42},
		{name: "sigkill", script: "kill -KILL $$", wantCode: -1, wantSig: "killed"},
		{name: "sigterm", script: "kill -TERM $$", wantCode: -1, wantSig: "terminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runTimed(t, Spec{Argv: ShellArgv(tt.script)})
			got := [2]any{res.ExitCode, res.Signal}
			if diff := cmp.Diff([2]any{tt.wantCode, tt.wantSig}, got); diff != "" {
				t.Errorf("[ExitCode Signal] mismatch (-want +got):\n%s", diff)
			}
			if res.StartErr != nil || res.TimedOut || res.Canceled {
				t.Errorf("StartErr=%v TimedOut=%v Canceled=%v", res.StartErr, res.TimedOut, res.Canceled)
			}
			if res.OK() != (tt.wantCode == 0) {
				t.Errorf("OK() = %v", res.OK())
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notexec"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		spec     Spec
		wantIn   string // substring of StartErr
		canceled bool
	}{
		{name: "empty argv", spec: Spec{}, wantIn: "empty argv"},
		{name: "not found", spec: Spec{Argv: []string{"no-such-binary-4242", "x"}}, wantIn: "no-such-binary-4242"},
		{name: "not executable", spec: Spec{Argv: []string{"./notexec"}, Dir: dir}, wantIn: "notexec"},
		{name: "missing dir", spec: Spec{Argv: []string{"true"}, Dir: filepath.Join(dir, "missing")}, wantIn: "working directory: stat"},
		{name: "dir is a file", spec: Spec{Argv: []string{"true"}, Dir: filepath.Join(dir, "notexec")}, wantIn: "not a directory"},
		{name: "ctx already done", ctx: canceled, spec: Spec{Argv: []string{"true"}}, wantIn: "canceled", canceled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			res := Run(ctx, tt.spec)
			if res.StartErr == nil || !strings.Contains(res.StartErr.Error(), tt.wantIn) {
				t.Fatalf("StartErr = %v, want an error mentioning %q", res.StartErr, tt.wantIn)
			}
			if res.ExitCode != -1 || res.OK() || res.Canceled != tt.canceled {
				t.Errorf("ExitCode=%d OK=%v Canceled=%v, want -1 false %v", res.ExitCode, res.OK(), res.Canceled, tt.canceled)
			}
		})
	}
}

func TestTimeoutVersusContext(t *testing.T) {
	t.Parallel()
	const short, long = 200 * time.Millisecond, time.Minute
	tests := []struct {
		name         string
		timeout      time.Duration
		ctxTimeout   time.Duration // 0: no deadline
		cancelAfter  time.Duration // 0: never cancelled explicitly
		argv         []string
		wantTimedOut bool
		wantCanceled bool
	}{
		{name: "own timeout", timeout: short, argv: []string{"sleep", "30"}, wantTimedOut: true},
		{name: "ctx deadline", ctxTimeout: short, argv: []string{"sleep", "30"}, wantCanceled: true},
		{name: "ctx cancel", cancelAfter: short, argv: []string{"sleep", "30"}, wantCanceled: true},
		{name: "own timeout first", timeout: short, ctxTimeout: long, argv: []string{"sleep", "30"}, wantTimedOut: true},
		{name: "ctx deadline first", timeout: long, ctxTimeout: short, argv: []string{"sleep", "30"}, wantCanceled: true},
		{name: "finishes in time", timeout: long, ctxTimeout: long, argv: []string{"true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.ctxTimeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
				defer cancel()
			}
			if tt.cancelAfter > 0 {
				time.AfterFunc(tt.cancelAfter, cancel)
			}
			res := runTimedCtx(t, ctx, Spec{Argv: tt.argv, Timeout: tt.timeout})
			got := [2]bool{res.TimedOut, res.Canceled}
			if diff := cmp.Diff([2]bool{tt.wantTimedOut, tt.wantCanceled}, got); diff != "" {
				t.Errorf("[TimedOut Canceled] mismatch (-want +got):\n%s", diff)
			}
			interrupted := tt.wantTimedOut || tt.wantCanceled
			if interrupted && (res.ExitCode != -1 || res.Signal != "terminated") {
				t.Errorf("ExitCode=%d Signal=%q, want -1 \"terminated\"", res.ExitCode, res.Signal)
			}
			if res.OK() == interrupted {
				t.Errorf("OK() = %v", res.OK())
			}
		})
	}
}
