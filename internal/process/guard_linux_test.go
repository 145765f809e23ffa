package process

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// capSets reads the Cap* lines of a /proc/PID/status.
func capSets(t *testing.T, status []byte) map[string]uint64 {
	t.Helper()
	sets := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, hex, ok := strings.Cut(sc.Text(), ":\t")
		if !ok || !strings.HasPrefix(name, "Cap") {
			continue
		}
		v, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		sets[name] = v
	}
	return sets
}

// TestChildCapabilities: when this process holds CAP_SYS_PTRACE (root, as
// in CI and in the action's container), its children hold none of
// droppedCaps, in any set, and cannot regain them (bounding set); the
// other capabilities are left alone.
func TestChildCapabilities(t *testing.T) {
	t.Parallel()
	self, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	mine := capSets(t, self)
	if mine["CapEff"]&(1<<unix.CAP_SYS_PTRACE) == 0 {
		t.Skip("this process does not hold CAP_SYS_PTRACE: nothing to drop")
	}
	var dropped uint64
	for _, c := range droppedCaps {
		dropped |= 1 << c
	}
	// Children are forked on several threads: start enough at once that
	// each thread forks some, and look at every one.
	var wg sync.WaitGroup
	for i := range 4 * spawnThreads() {
		wg.Go(func() {
			res := runTimed(t, Spec{Argv: []string{"sh", "-c", "cat /proc/self/status; sleep 0.2"}})
			if !res.OK() {
				t.Errorf("child %d: OK() = false: %+v", i, res)
				return
			}
			child := capSets(t, res.Stdout)
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
