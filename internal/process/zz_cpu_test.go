package process

import (
	"bytes"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkZZCPU(b *testing.B) {
	argv := []string{"sh", "-c", "test -f never.txt"}
	var run, ex time.Duration
	for b.Loop() {
		c := selfCPU()
		Run(b.Context(), Spec{Argv: argv})
		c2 := selfCPU()
		run += c2 - c
		var out bytes.Buffer
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &out
		_ = cmd.Run()
		ex += selfCPU() - c2
	}
	b.ReportMetric(float64(run.Microseconds())/float64(b.N), "run-cpu-us/op")
	b.ReportMetric(float64(ex.Microseconds())/float64(b.N), "exec-cpu-us/op")
}
