package process

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// waitFor is a shell function that waits (up to ten seconds) until the
// file $1 is not empty; escapees write their pid there.
const waitFor = `wait_for() { i=0; while [ ! -s "$1" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; }; `

// escapee is a command line that runs a sh -c script in a new session
// (setsid), which first writes its pid ($$) atomically to the file named
// by the leader's $0.
func escapee(script string) string {
	return `setsid sh -c 'echo $$ >"$1.tmp"; mv "$1.tmp" "$1"; ` + script + `' sh "$0"`
}

// joinGroup is a command line that moves itself into the process group of
// the leader's parent (this process), if it can, writes its pid to the
// leader's $0 and sleeps: only a leader in another session stops it.
const joinGroup = `perl -e 'open(my $f, "<", "/proc/$ARGV[0]/stat") or die; my @s = split / /, (split /\) /, <$f>)[1];
	setpgrp(0, $s[2]); open(my $o, ">", "$ARGV[1].tmp") or die; print $o "$$\n"; close $o;
	rename("$ARGV[1].tmp", $ARGV[1]); exec("sleep", "30")' "$PPID" "$0"`

// exists reports whether /proc lists pid, zombies included.
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// inSession lists the processes of session sid, zombies included.
func inSession(t *testing.T, sid int) []int {
	t.Helper()
	procs, err := allProcs()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for pid, s := range procs {
		if s.sid == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestEscapeesAreKilled: whatever a child leaves behind outside its group
// — setsid children, orphans reparented here, stopped ones, fork loops — is
// gone, not even a zombie, when Run returns, and Run returns promptly
// although the escapees held its stdout. Not parallel: another test's sweep
// would kill an orphan before it has written its pid.
func TestEscapeesAreKilled(t *testing.T) {
	tests := []struct{ name, script string }{
		{"setsid child", escapee("exec sleep 30") + ` & wait_for "$0"; cat "$0"`},
		{"double fork", `(` + escapee("exec sleep 30") + ` &); wait_for "$0"; cat "$0"`},
		{"stopped", `(` + escapee("kill -STOP $$") + ` &); wait_for "$0"; cat "$0"`},
		{"exited orphan", `(` + escapee("exit 0") + ` &); wait_for "$0"; cat "$0"; sleep 0.05`},
		{"fork loop", `(` + escapee(`while :; do sleep 30 & done`) + ` &); wait_for "$0"; cat "$0"; sleep 0.05`},
		{"orphan loop", `(` + escapee(`while :; do sh -c "sleep 30 &"; done`) + ` &); wait_for "$0"; cat "$0"; sleep 0.05`},
		{"joins this process's group", joinGroup + ` & wait_for "$0"; cat "$0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			res := runTimed(t, Spec{Argv: []string{"sh", "-c", waitFor + tt.script, pidFile}})
			if !res.OK() {
				t.Errorf("OK() = false: %+v", res)
			}
			pid := pidsIn(t, res.Stdout)[0]
			if exists(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("escaped process %d is still there after Run", pid)
			}
			if left := inSession(t, pid); len(left) > 0 {
				t.Errorf("processes %v of the escapee's session are still there after Run", left)
			}
		})
	}
}

// TestOwnSessionSpared: children that other code started with os/exec stay
// in this process's session; a sweep neither kills them, nor what they
// start in another session while they live, nor reaps them: os/exec still
// gets their exit status.
func TestOwnSessionSpared(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	own := exec.Command("sh", "-c", waitFor+escapee("exec sleep 30")+` & wait_for "$0"; exec sleep 30`, pidFile)
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer own.Process.Kill()
	grandchild := waitPidFile(t, pidFile)
	defer syscall.Kill(grandchild, syscall.SIGKILL)

	res := runTimed(t, Spec{Argv: ShellArgv(`setsid sleep 30 & exit 0`)}) // a sweep with work to do
	if !res.OK() {
		t.Errorf("OK() = false: %+v", res)
	}
	if err := Sweep(); err != nil {
		t.Errorf("Sweep: %v", err)
	}
	for _, pid := range []int{own.Process.Pid, grandchild} {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("process %d of this process's session was touched: kill(0): %v", pid, err)
		}
	}
	_ = own.Process.Kill()
	err := own.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.String() != "signal: killed" {
		t.Errorf("os/exec's Wait = %v, want signal: killed (its status must not be stolen)", err)
	}
}

// TestLiveLeaderSpared: a Run that ends sweeps while another Run is still
// in progress; the other's children, even in a session of their own, are
// left alone.
func TestLiveLeaderSpared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, goFile := filepath.Join(dir, "pid"), filepath.Join(dir, "go")
	script := waitFor + escapee("exec sleep 30") + ` & c=$!; wait_for "$0"
		i=0; while [ ! -e "$1" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
		kill -0 "$(cat "$0")" && echo alive; kill $c`
	first := make(chan Result, 1)
	go func() { first <- runTimed(t, Spec{Argv: []string{"sh", "-c", script, pidFile, goFile}}) }()
	pid := waitPidFile(t, pidFile)

	res := runTimed(t, Spec{Argv: ShellArgv(`setsid sleep 30 & exit 0`)})
	if !res.OK() {
		t.Errorf("OK() = false: %+v", res)
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := <-first
	if diff := cmp.Diff("alive\n", string(got.Stdout)); diff != "" {
		t.Errorf("the running child's own child %d (-want +got):\n%s", pid, diff)
	}
	if exists(pid) {
		t.Errorf("escaped process %d is still there after its Run", pid)
	}
}

// waitPidFile waits (up to promptly) for a pid in file.
func waitPidFile(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(promptly)
	for {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after %v", file, promptly)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSweepFindsOrphans: an orphan that a child of other code left in a
// session of its own is reparented here; both ways of reading the tree
// find it, and Sweep (the thorough one) kills it. Not parallel: another
// test's sweep would kill the orphan first.
func TestSweepFindsOrphans(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	out, err := exec.Command("sh", "-c", waitFor+escapee("exec sleep 30 >/dev/null 2>&1")+` & wait_for "$0"; cat "$0"`, pidFile).Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan := pidsIn(t, out)[0]
	defer syscall.Kill(orphan, syscall.SIGKILL)

	self := os.Getpid()
	own, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	tree, ok := treeProcs(self, own, map[int]bool{})
	if !ok {
		t.Skip("no children files in /proc")
	}
	all, err := allProcs()
	if err != nil {
		t.Fatal(err)
	}
	fromTree, _ := escapees(tree, self, own, map[int]bool{})
	fromAll, _ := escapees(all, self, own, map[int]bool{})
	slices.Sort(fromTree)
	slices.Sort(fromAll)
	if diff := cmp.Diff(fromAll, fromTree); diff != "" {
		t.Errorf("escapees read from the tree differ from those read from every process (-all +tree):\n%s", diff)
	}
	if !slices.Contains(fromAll, orphan) {
		t.Errorf("escapees %v do not include the orphan %d", fromAll, orphan)
	}
	if err := Sweep(); err != nil {
		t.Errorf("Sweep: %v", err)
	}
	if exists(orphan) {
		t.Errorf("orphan %d is still there after Sweep", orphan)
	}
}

// TestParallelRunsKillTheirEscapees: children that end together sweep
// side by side, each while the others are still live leaders; each Run
// returns only once what its own child left behind is gone. Eight children at a time, in rounds, each
// leave a process in a session of its own that would outlive them.
func TestParallelRunsKillTheirEscapees(t *testing.T) {
	script := waitFor + escapee("exec sleep 30") + ` & wait_for "$0"; cat "$0"`
	for round := range 5 {
		var wg sync.WaitGroup
		for i := range 8 {
			pidFile := filepath.Join(t.TempDir(), "pid")
			wg.Go(func() {
				res := runTimed(t, Spec{Argv: []string{"sh", "-c", script, pidFile}})
				pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
				switch {
				case !res.OK() || err != nil:
					t.Errorf("round %d, child %d: %+v", round, i, res)
				case exists(pid):
					t.Errorf("round %d, child %d: its escapee %d is still there when Run returns", round, i, pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
		}
		wg.Wait()
	}
}
