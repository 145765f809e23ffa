package runner

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the binary's garbage collector target is GCPercent, unless
// GOGC chose one; restoring puts the previous target back.
func TestTuneGC(t *testing.T) {
	current := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	before := current()
	restore := TuneGC(func(string) string { return "" })
	if got := current(); got != GCPercent {
		t.Errorf("GC target with GOGC unset: %d, want %d", got, GCPercent)
	}
	restore()
	if got := current(); got != before {
		t.Errorf("GC target after restore: %d, want %d", got, before)
	}
	TuneGC(func(k string) string { return map[string]string{"GOGC": "50"}[k] })()
	if got := current(); got != before {
		t.Errorf("GC target with GOGC set: %d, want it left at %d", got, before)
	}
}
