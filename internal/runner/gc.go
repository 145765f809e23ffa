package runner

// TuneGC is a no-op kept until its one caller (cmd/loop-action) drops it:
// BenchmarkSpawnFloor showed no gain from a raised GC target.
func TuneGC(func(string) string) (restore func()) { return func() {} }
