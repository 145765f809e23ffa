//go:build unix

package process

import (
	"bytes"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Run against os/exec alone: the benchmarks below measure both in the same
// process, interleaved, and report their ratio. Set PROCESS_TEST_CONFINED=1
// to measure children forked on any thread, as in the loop-action binary.

// floorArgv is the child of the comparisons: a check that fails.
var floorArgv = []string{"sh", "-c", "test -f never.txt"}

// runFloor runs floorArgv through Run.
func runFloor(b *testing.B) {
	if res := Run(b.Context(), Spec{Argv: floorArgv}); res.ExitCode != 1 || res.SweepErr != nil {
		b.Errorf("%+v", res)
	}
}

// execFloor runs floorArgv with os/exec alone, capturing its output as Run
// does: the floor.
func execFloor(*testing.B) {
	var out bytes.Buffer
	cmd := exec.Command(floorArgv[0], floorArgv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
}

// sessionFloor is execFloor with the child in a session of its own, as Run
// starts it: on Linux with autogroup scheduling (sched_autogroup_enabled)
// every new session is a new scheduling group, which a busy CPU serves
// later than a child of this process's group.
func sessionFloor(*testing.B) {
	var out bytes.Buffer
	cmd := exec.Command(floorArgv[0], floorArgv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	setGroup(cmd)
	_ = cmd.Run()
}

// BenchmarkParallel10 starts 10 children at once and waits for them all,
// through Run (guarded, each swept after it) and, interleaved, with
// os/exec alone; it reports both and their ratio, and the time and ratio
// of os/exec starting each child in a new session. loaded runs the same
// while a busy process per processor competes for the CPU, as another job
// on the machine would.
func BenchmarkParallel10(b *testing.B) {
	b.Run("calm", parallel10)
	b.Run("loaded", func(b *testing.B) {
		defer burn(b, runtime.NumCPU())()
		parallel10(b)
	})
}

func parallel10(b *testing.B) {
	var run, floor, session time.Duration
	for b.Loop() {
		run += batch(b, runFloor)
		floor += batch(b, execFloor)
		session += batch(b, sessionFloor)
	}
	b.ReportMetric(float64(run.Microseconds())/1e3/float64(b.N), "run-ms/op")
	b.ReportMetric(float64(floor.Microseconds())/1e3/float64(b.N), "exec-ms/op")
	b.ReportMetric(float64(session.Microseconds())/1e3/float64(b.N), "exec-setsid-ms/op")
	b.ReportMetric(float64(run)/float64(floor), "ratio")
	b.ReportMetric(float64(run)/float64(session), "ratio-setsid")
}

// batch calls f from 10 goroutines at once and returns how long they took.
func batch(b *testing.B, f func(*testing.B)) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { f(b) })
	}
	wg.Wait()
	return time.Since(start)
}

// burn starts n processes that spin until the returned function stops
// them. They are in this process's session, which no sweep touches.
func burn(b testing.TB, n int) (stop func()) {
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	return func() {
		for _, cmd := range cmds {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
}

// BenchmarkCPU is the CPU time this process spends per child (user and
// system, the collector's included), through Run and, interleaved, with
// os/exec alone, one child at a time: what Run costs on a machine whose
// processors are all busy.
func BenchmarkCPU(b *testing.B) {
	var run, floor time.Duration
	for b.Loop() {
		c0 := selfCPU()
		runFloor(b)
		c1 := selfCPU()
		execFloor(b)
		run, floor = run+c1-c0, floor+selfCPU()-c1
	}
	b.ReportMetric(float64(run.Microseconds())/float64(b.N), "run-cpu-us/op")
	b.ReportMetric(float64(floor.Microseconds())/float64(b.N), "exec-cpu-us/op")
	b.ReportMetric(float64(run)/float64(floor), "ratio")
}

// selfCPU is the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
