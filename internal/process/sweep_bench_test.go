package process

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// BenchmarkSweep is the cost of a thorough Sweep when nothing escaped: one
// read of every process in /proc. BenchmarkSweepTree is what Run adds to
// every child. Compare them with BenchmarkStartTrue, the cost of starting
// and waiting for the smallest child (os/exec alone), and BenchmarkRunTrue.
func BenchmarkSweep(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := Sweep(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweepTree is the sweep Run does, through the children files.
func BenchmarkSweepTree(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := sweepLive(false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStartTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunTrue(b *testing.B) {
	for b.Loop() {
		if res := Run(b.Context(), Spec{Argv: []string{"true"}}); !res.OK() {
			b.Fatalf("%+v", res)
		}
	}
}

// BenchmarkSweepTreeLive is the sweep Run does while ten other Runs are
// in progress, as when the children of a wave or of the checks end one
// after another.
func BenchmarkSweepTreeLive(b *testing.B) {
	b.ReportAllocs()
	ctx, cancel := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range 10 {
		wg.Go(func() { Run(ctx, Spec{Argv: []string{"sleep", "30"}}) })
	}
	for deadline := time.Now().Add(promptly); ; time.Sleep(time.Millisecond) {
		live.Lock()
		n := len(live.pids)
		live.Unlock()
		if n >= 10 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of 10 children live after %v", n, promptly)
		}
	}
	for b.Loop() {
		if err := sweepLive(false); err != nil {
			b.Fatal(err)
		}
	}
}
