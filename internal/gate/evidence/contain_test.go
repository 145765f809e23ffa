//go:build linux

package evidence

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
)

// TestMain guards the test process as the binary does: Collect's sweep
// finds orphans only in a child subreaper.
func TestMain(m *testing.M) {
	if err := process.Guard(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestLookFIFO: a checked file that an agent replaced with a FIFO is
// reported as not a regular file, at once: open(2) of a FIFO would wait
// for a writer forever.
func TestLookFIFO(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fifo := filepath.Join(root, "report.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var read gate.FileResult
	for _, withRead := range []bool{false, true} {
		read = lookWithin(t, root, "report.md", withRead)
		want := gate.FileResult{Path: "report.md", Exists: true, Err: "not a regular file", ReadLimit: ReadLimit}
		if diff := cmp.Diff(want, read); diff != "" {
			t.Errorf("Look(read=%v) (-want +got):\n%s", withRead, diff)
		}
	}
	cfg, err := loop.Parse("loop.toml", []byte("name = \"f\"\n[stop]\nmax_tokens = 1\n[[goal]]\nname = \"g\"\n  [[goal.check]]\n  type = \"regex\"\n  path = \"report.md\"\n  pattern = \"ok\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	v := gate.Evaluate(cfg, gate.Evidence{Files: map[gate.CheckID]gate.FileResult{{Goal: "g"}: read}})
	if diff := cmp.Diff("`report.md` could not be read: not a regular file", v[0].Checks[0].Evidence); diff != "" {
		t.Errorf("evidence line (-want +got):\n%s", diff)
	}
}

// lookWithin is Look, failing the test if Look is still blocked after a
// long while; it then opens the FIFO for writing, which releases Look.
func lookWithin(t *testing.T, root, path string, read bool) gate.FileResult {
	t.Helper()
	got := make(chan gate.FileResult, 1)
	go func() { got <- Look(root, path, read) }()
	select {
	case r := <-got:
		return r
	case <-time.After(10 * time.Second):
		t.Errorf("Look(%q, read=%v) still blocked after 10s", path, read)
		if w, err := os.OpenFile(filepath.Join(root, path), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		return <-got
	}
}

// TestCollectKillsLeftovers: a process an agent left behind (here: the
// orphan of a child that called setsid) is killed before anything is
// measured, even when the config runs no command that would sweep.
func TestCollectKillsLeftovers(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "report.md"), "ok\n")
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `setsid sh -c 'echo $$ >"$0.tmp"; mv "$0.tmp" "$0"; exec sleep 30' "$0" >/dev/null 2>&1 &
		i=0; while [ ! -s "$0" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; cat "$0"`
	out, err := exec.Command("sh", "-c", script, pidFile).Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("pid %q: %v", out, err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	cfg, err := loop.Parse("loop.toml", []byte("name = \"f\"\n[stop]\nmax_tokens = 1\n[[goal]]\nname = \"g\"\n  [[goal.check]]\n  type = \"file_exists\"\n  path = \"report.md\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ev := (&Collector{Root: root}).Collect(t.Context(), cfg)
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("the leftover process %d is still there after Collect", pid)
	}
	if r := ev.Files[gate.CheckID{Goal: "g"}]; !r.Exists || r.Err != "" {
		t.Errorf("file evidence = %+v", r)
	}
}

// TestVoidMeasurement: once processes could not all be killed, no check
// is measured any more; each one left fails with the reason.
func TestVoidMeasurement(t *testing.T) {
	t.Parallel()
	cfg, err := loop.Parse("loop.toml", []byte(`
name = "v"
[stop]
max_tokens = 1
[metrics]
command = "echo {}"
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "touch ran"
  [[goal.check]]
  type = "regex"
  path = "report.md"
  pattern = "ok"
`))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "report.md"), "ok\n")
	c := &Collector{Root: root}
	ev := gate.Evidence{Commands: map[gate.CheckID]gate.CommandResult{}, Files: map[gate.CheckID]gate.FileResult{}}
	why := fmt.Errorf("not measured: a process is still running")
	for i, ch := range cfg.Goals[0].Checks {
		if got := c.check(t.Context(), &ev, gate.CheckID{Goal: "g", Index: i}, ch, why); got != why {
			t.Errorf("check %d returned %v, want the reason kept", i, got)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Error("the command check ran although the measurement was void")
	}
	verdicts := gate.Evaluate(cfg, ev)
	var lines []string
	for _, ch := range verdicts[0].Checks {
		lines = append(lines, fmt.Sprintf("%s %s", ch.Status, ch.Evidence))
	}
	want := []string{
		"fail `touch ran` could not start: not measured: a process is still running",
		"fail `report.md` could not be read: not measured: a process is still running",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// TestCollectSweptFailedVoidsEverything: a caller's sweep that failed,
// handed to CollectSwept, voids every check as Collect's own failed sweep
// does, in both check orders, and no command runs.
func TestCollectSweptFailedVoidsEverything(t *testing.T) {
	t.Parallel()
	for _, concurrency := range []int{1, 0} {
		t.Run(fmt.Sprintf("check_concurrency=%d", concurrency), func(t *testing.T) {
			t.Parallel()
			cfg, err := loop.Parse("loop.toml", []byte(fmt.Sprintf(`name = "v"
[stop]
max_tokens = 1
[run]
check_concurrency = %d
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "touch ran"
  [[goal.check]]
  type = "file_exists"
  path = "report.md"
`, concurrency)))
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			write(t, filepath.Join(root, "report.md"), "ok\n")
			ev := (&Collector{Root: root}).CollectSwept(t.Context(), cfg, fmt.Errorf("1 process survived"))
			if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
				t.Error("the command check ran although the caller's sweep failed")
			}
			var lines []string
			for _, ch := range gate.Evaluate(cfg, ev)[0].Checks {
				lines = append(lines, fmt.Sprintf("%s %s", ch.Status, ch.Evidence))
			}
			want := []string{
				"fail `touch ran` could not start: not measured: processes agents started are still running: 1 process survived",
				"fail `report.md` could not be read: not measured: processes agents started are still running: 1 process survived",
			}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if ev.Snapshot != "" {
				t.Errorf("snapshot %q taken of a void measurement", ev.Snapshot)
			}
		})
	}
}
