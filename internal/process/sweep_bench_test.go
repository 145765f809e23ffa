package process

import (
	"os/exec"
	"testing"
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
