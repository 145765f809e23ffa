package runner

import "runtime/debug"

// GCPercent is the garbage collector's target (debug.SetGCPercent) the
// loop-action binary runs with unless GOGC chooses one. A run's live heap
// is a few MiB, which Go's default of 100 collects again every 4 MiB
// allocated — about every second iteration of ten agents and ten checks,
// most of it the environment os/exec copies for each process — and each
// collection takes a core for a few milliseconds beside the iteration's
// critical path. At 400 the heap grows to 16 MiB before a collection,
// four times fewer, a cost in memory no CI machine notices.
const GCPercent = 400

// TuneGC sets the garbage collector's target to GCPercent unless getenv
// says GOGC chose one, and returns what puts the previous target back.
func TuneGC(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(old) }
}
