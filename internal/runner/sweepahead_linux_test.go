package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/process"
	"github.com/loop-action/loop-action/internal/runner/provider"
)

// leaveARewriter is a builder that leaves behind, in a session of its own,
// a process that starts children (which make the sweep that kills them
// all take a few milliseconds), then rewrites the protected
// checks/run.sh to `exit 0` and plants the ignored build/planted without
// pause, and writes its pid to pidFile once it has done both a first time. Started straight from this
// process (not through process.Run, whose own sweep would kill it as the
// builder ends), it is what the measurement's sweep has to kill: it is
// still writing while the wave is recorded, guarded and published, beside
// that sweep (sweepAhead).
func leaveARewriter(pidFile string, children int) fake {
	script := `i=0; while [ $i -lt ` + strconv.Itoa(children) + ` ]; do sleep 30 & i=$((i+1)); done
		while :; do printf 'exit 0\n' >checks/run.sh; mkdir -p build; : >build/planted
		[ -s "$0" ] || { echo $$ >"$0.tmp"; mv "$0.tmp" "$0"; }; done`
	return func(_ context.Context, req provider.Request) provider.Response {
		cmd := exec.Command("sh", "-c", script, pidFile)
		cmd.Dir = req.Root
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return provider.Response{Err: err}
		}
		for range 500 {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
				return provider.Response{}
			}
			time.Sleep(10 * time.Millisecond)
		}
		return provider.Response{Err: errors.New("the rewriter never wrote its pid")}
	}
}

// TestLeftoverRewriterBesideTheSweep: a process left behind that keeps
// rewriting a guarded path and planting an ignored file while the wave's
// guard runs beside the measurement's sweep gains nothing, whichever of
// its writes the guard saw: the measurement waits for the sweep, which
// kills it, before the ignored file is scrubbed and the checks run; what it wrote to the guarded path is put
// back (by the wave's guard, or by the measurement's, which voids it), the
// check fails and the run does not succeed. Not parallel: another test's
// sweep would kill the rewriter before this run's could.
func TestLeftoverRewriterBesideTheSweep(t *testing.T) {
	if err := process.Guard(); err != nil { // the subreaper
		t.Fatal(err)
	}
	for _, children := range []int{0, 30} {
		t.Run(strconv.Itoa(children)+" children", func(t *testing.T) {
			for i := range 5 { // the rewriter's last write lands anywhere in the guard's work
				rewriterBesideTheSweep(t, i, children)
			}
		})
	}
}

func rewriterBesideTheSweep(t *testing.T, i, children int) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := newHarness(t, oneBuilder("sh checks/run.sh", "test ! -e build/planted"), map[string]Provider{"a": leaveARewriter(pidFile, children)})
	h.opts.Env = os.Environ()
	mustWrite(t, filepath.Join(h.root, ".gitignore"), "build/\n")
	run := filepath.Join(h.root, "checks", "run.sh")
	mustWrite(t, run, "exit 1\n")
	t.Cleanup(func() { killPidFile(pidFile) })
	aliveAfterSweep := false
	h.onStep(func(step string) {
		if _, err := os.Stat(pidFile); err == nil && step == "swept" { // the wait for the sweep, before the scrub
			aliveAfterSweep = aliveAfterSweep || alive(t, pidFile)
		}
	})
	if out := h.run(context.Background()); out.Success {
		t.Errorf("run %d: the rewriter's writes made the run succeed", i)
	}
	if aliveAfterSweep {
		t.Errorf("run %d: the rewriter was still running when the measurement's sweep was done", i)
	}
	if alive(t, pidFile) {
		t.Errorf("run %d: the rewriter is still running after the run", i)
	}
	if b, _ := os.ReadFile(run); string(b) != "exit 1\n" {
		t.Errorf("run %d: checks/run.sh = %q, want it put back", i, b)
	}
	if count(h.events(), ledger.ProtectedReverted, "") == 0 {
		t.Errorf("run %d: no protected path was put back", i)
	}
}
