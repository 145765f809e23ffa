package process

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// capSetsOf reads the Cap* lines of a /proc/PID/status.
func capSetsOf(t *testing.T, status []byte) capSets {
	t.Helper()
	sets, ok := capabilitySets(status)
	if !ok {
		t.Fatalf("no capability sets in:\n%s", status)
	}
	return sets
}

// threadCaps are the capability sets of a thread of this process that
// runs ordinary goroutines. /proc/self/status would show the main
// thread's, which is not necessarily one.
func threadCaps(t *testing.T) capSets {
	t.Helper()
	got := make(chan []byte, 1)
	go func() {
		runtime.LockOSThread() // the thread whose status is read
		defer runtime.UnlockOSThread()
		status, _ := os.ReadFile("/proc/thread-self/status")
		got <- status
	}()
	return capSetsOf(t, <-got)
}

// TestChildCapabilities: when this process holds CAP_SYS_PTRACE (root, as
// in CI and in the action's container), its children hold none of
// droppedCaps, in any set, and cannot regain them (bounding set); the
// other capabilities are left alone, and so are this process's threads:
// the ones that forked them ended.
func TestChildCapabilities(t *testing.T) {
	t.Parallel()
	mine := threadCaps(t)
	if mine["CapEff"]&(1<<unix.CAP_SYS_PTRACE) == 0 {
		t.Skip("this process does not hold CAP_SYS_PTRACE: nothing to drop")
	}
	dropped := droppedMask()
	// Children are forked on threads of their own: start several at once,
	// and look at every one.
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			res := runTimed(t, Spec{Argv: []string{"sh", "-c", "cat /proc/self/status; sleep 0.2"}})
			if !res.OK() {
				t.Errorf("child %d: OK() = false: %+v", i, res)
				return
			}
			child := capSetsOf(t, res.Stdout)
			for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if got := child[set] & dropped; got != 0 {
					t.Errorf("child %d's %s = %#x holds %#x of the dropped capabilities", i, set, child[set], got)
				}
			}
			if diff := cmp.Diff(mine["CapBnd"]&^dropped, child["CapBnd"]); diff != "" {
				t.Errorf("child %d's CapBnd: only the dropped capabilities may be missing (-want +got):\n%s", i, diff)
			}
		})
	}
	wg.Wait()
	for range 8 { // the runtime's threads, on which goroutines run
		if caps := threadCaps(t); caps["CapEff"]&dropped != dropped&mine["CapEff"] {
			t.Errorf("a thread of this process has CapEff %#x after the starts, want %#x", caps["CapEff"], mine["CapEff"])
		}
	}
}

// TestChildCannotReadThisProcess: a child, even root, can read neither the
// environment nor the memory map of this process: it is not dumpable, and
// the child lacks CAP_SYS_PTRACE.
func TestChildCannotReadThisProcess(t *testing.T) {
	t.Parallel()
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		t.Errorf("PR_GET_DUMPABLE = %d, %v; want 0", d, err)
	}
	res := runTimed(t, Spec{Argv: ShellArgv(`for f in environ maps cmdline; do
		if head -c 1 /proc/$PPID/$f >/dev/null 2>&1; then echo "$f readable"; fi; done`)})
	if diff := cmp.Diff("cmdline readable\n", string(res.Stdout)); diff != "" {
		t.Errorf("what a child could read of this process (-want +got):\n%s", diff)
	}
}
