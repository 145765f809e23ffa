package process

import (
	"bytes"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// BenchmarkParallel10 starts 10 children at once and waits for them all,
// through Run (guarded, each swept after it) and, interleaved, with
// os/exec alone, capturing the output as Run does (the floor). It reports both and their ratio.
func BenchmarkParallel10(b *testing.B) {
	argv := []string{"sh", "-c", "test -f never.txt"}
	var run, floor time.Duration
	for b.Loop() {
		start := time.Now()
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if res := Run(b.Context(), Spec{Argv: argv}); res.ExitCode != 1 || res.SweepErr != nil {
					b.Errorf("%+v", res)
				}
			})
		}
		wg.Wait()
		run += time.Since(start)
		start = time.Now()
		for range 10 {
			wg.Go(func() {
				var out bytes.Buffer
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Stdout, cmd.Stderr = &out, &out
				_ = cmd.Run()
			})
		}
		wg.Wait()
		floor += time.Since(start)
	}
	b.ReportMetric(float64(run.Microseconds())/1e3/float64(b.N), "run-ms/op")
	b.ReportMetric(float64(floor.Microseconds())/1e3/float64(b.N), "exec-ms/op")
	b.ReportMetric(float64(run)/float64(floor), "ratio")
}
