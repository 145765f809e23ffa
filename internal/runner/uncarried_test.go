//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/process"
	"github.com/loop-action/loop-action/internal/runner/provider"
)

// planted is a check that passes only if build/planted is there while it
// runs (it waits up to half a second for it).
const planted = "i=0; while [ ! -e build/planted ] && [ $i -lt 50 ]; do sleep 0.01; i=$((i+1)); done; test -e build/planted"

// leaveAPlanter is a builder that starts, through a shell that exits at
// once, a process in a session of its own (reparented to this process, the
// subreaper) that plants build/planted every 5 ms, and writes its pid to
// pidFile once it has planted it a first time. It returns when that pid is
// there: the process outlives the builder.
func leaveAPlanter(pidFile string) fake {
	script := `setsid sh -c 'while :; do mkdir -p build; : >build/planted; [ -s "$0" ] || { echo $$ >"$0.tmp"; mv "$0.tmp" "$0"; }; sleep 0.005; done' "$0" >/dev/null 2>&1 &`
	return func(_ context.Context, req provider.Request) provider.Response {
		cmd := exec.Command("sh", "-c", script, pidFile)
		cmd.Dir = req.Root
		if err := cmd.Run(); err != nil {
			return provider.Response{Err: err}
		}
		for i := 0; i < 500; i++ {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
				return provider.Response{}
			}
			time.Sleep(10 * time.Millisecond)
		}
		return provider.Response{Err: errors.New("the planter never wrote its pid")}
	}
}

// TestLeftoverPlanterIsKilledBeforeMeasuring: a process a builder left
// behind, which keeps planting an ignored file the check needs, is killed
// by the one sweep before the measurement (the collector is told, and does
// not sweep again), before the ignored file is removed: the file stays
// gone while the check runs, the goal is not met, and the removal is
// recorded. Without that sweep, the planter plants the file again after
// the scrub and the check passes. Not parallel: another test's sweep
// would kill the planter before this run's could.
func TestLeftoverPlanterIsKilledBeforeMeasuring(t *testing.T) {
	if err := process.Guard(); err != nil { // the subreaper that adopts the planter
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := newHarness(t, oneBuilder(planted), map[string]Provider{"a": leaveAPlanter(pidFile)})
	h.opts.Env = os.Environ()
	if err := os.WriteFile(filepath.Join(h.root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killPidFile(pidFile) })
	out := h.run(context.Background())
	if out.Success {
		t.Error("the check passed thanks to the planter's ignored file")
	}
	if alive(t, pidFile) {
		t.Error("the planter is still running after the run")
	}
	var removed []string
	for _, e := range h.events() {
		if e.Type == ledger.UncarriedRemoved {
			removed = append(removed, e.Path)
		}
	}
	if diff := cmp.Diff([]string{"build"}, removed); diff != "" {
		t.Errorf("uncarried paths removed (-want +got):\n%s", diff)
	}
}

// alive reports whether the process whose pid is in pidFile still runs.
func alive(t *testing.T, pidFile string) bool {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// killPidFile kills the process whose pid is in pidFile, if any.
func killPidFile(pidFile string) {
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
