package state_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/state"
)

// BenchmarkBranchSave measures a save of a run 5 iterations long against
// one of a run 5,000 iterations long, each on a branch in a bare
// repository reached over file:// (so git-receive-pack runs as a child
// process, as a real push would on the server). Each iteration is a chunk
// of 20 events, ~2 KiB of log and a summary (benchCommit), and the
// measured save changes one file of a 200-file workspace. A run is
// committed by SeedRun (the files its saves would leave, pushed as one
// commit: 5,000 pushes would take minutes), and the local cache
// collected, as a long run's would have been. Each measured save is the
// run's next iteration, sending what a real one sends (a few dozen saves
// do not change a run's length much).
//
// Every op saves both runs, one right after the other, so that the
// machine's drift (git's exchange varies twofold under load) hits both
// alike; it reports save5-ms/op and save5000-ms/op, their ratio (the cost
// must not grow with the run), and each save split in two:
// exchange*-ms/op, the receive-pack exchange (building the pack and git's
// work until it exits), and ours*-ms/op, the rest (the store's own work on
// the critical path). self-cpu-ms/op and git-cpu-ms/op are the CPU time a
// save takes in this process (writing the saves' objects to the local
// repository included) and in the git processes it
// waited for. BenchmarkReceivePack (package gitremote) measures the push
// exchange alone.
func BenchmarkBranchSave(b *testing.B) {
	runs := []*benchRun{seedBenchRun(b, 5), seedBenchRun(b, 5000)}
	self, git := cpuTimes()
	for b.Loop() {
		for _, r := range runs {
			r.save(b)
		}
	}
	self2, git2 := cpuTimes()
	ms := func(d time.Duration, saves int) float64 { return float64(d.Microseconds()) / 1e3 / float64(saves) }
	short, long := runs[0], runs[1]
	b.ReportMetric(ms(short.saving, b.N), "save5-ms/op")
	b.ReportMetric(ms(long.saving, b.N), "save5000-ms/op")
	b.ReportMetric(float64(long.saving)/float64(short.saving), "ratio")
	b.ReportMetric(ms(short.exchange(), b.N), "exchange5-ms/op")
	b.ReportMetric(ms(long.exchange(), b.N), "exchange5000-ms/op")
	b.ReportMetric(ms(short.saving-short.exchange(), b.N), "ours5-ms/op")
	b.ReportMetric(ms(long.saving-long.exchange(), b.N), "ours5000-ms/op")
	b.ReportMetric(ms(self2-self, 2*b.N), "self-cpu-ms/op")
	b.ReportMetric(ms(git2-git, 2*b.N), "git-cpu-ms/op")
}

// benchRun is a run of BenchmarkBranchSave and what its saves took.
type benchRun struct {
	url      string // the remote
	br       *state.Branch
	root     string
	cp       *state.Checkpoint
	saving   time.Duration // the measured saves, in all
	exchange func() time.Duration
}

// seedBenchRun commits a run length iterations long on a branch of its
// own and collects the local cache.
func seedBenchRun(b *testing.B, length int) *benchRun {
	b.Helper()
	bare := newBare(b, b.TempDir(), "state.git")
	r := &benchRun{url: "file://" + bare, root: benchWorkspace(b, 200), cp: newCheckpoint("bench/main")}
	r.br = openBranch(b, r.url, r.root, b.TempDir())
	if err := state.SeedRun(b.Context(), r.br, r.cp, length, benchCommit); err != nil {
		b.Fatal(err)
	}
	if err := state.CollectCache(r.br); err != nil {
		b.Fatal(err)
	}
	before := state.ExchangeTime(r.br)
	r.exchange = func() time.Duration { return state.ExchangeTime(r.br) - before }
	return r
}

// save saves the run's next iteration, timing it.
func (r *benchRun) save(b *testing.B) {
	r.cp.Iteration++
	touch(b, r.root, r.cp.Iteration)
	start := time.Now()
	if err := r.br.Save(b.Context(), r.cp, benchCommit(r.cp.Iteration)); err != nil {
		b.Fatal(err)
	}
	r.saving += time.Since(start)
}

// BenchmarkBranchConsolidatingSave measures the saves of a run 5,000
// iterations long (and more) at the edge of a hundred: the save of
// iteration X99, which consolidates nothing, of X00, which consolidates
// the summaries of the hundred before, and of X01, which consolidates the
// ledger's and the log's. Each op seeds the run up to the next edge and
// collects the local cache outside the timer. In "same-process" the
// process that stored the hundred consolidates it, reading the files
// from the loose objects its saves wrote; in "new-process" a new one does,
// reading them from the collected cache's pack, as a resumed run's first
// consolidation does. It reports the store's own share of each save (the save less
// git's receive-pack exchange): plain-ms/op, summaries-ms/op and
// ledger+log-ms/op. BenchmarkBranchSave, whose saves seldom cross an
// edge, measures the common save.
func BenchmarkBranchConsolidatingSave(b *testing.B) {
	for _, reopen := range []bool{false, true} {
		name := map[bool]string{false: "same-process", true: "new-process"}[reopen]
		b.Run(name, func(b *testing.B) { benchConsolidating(b, reopen) })
	}
}

func benchConsolidating(b *testing.B, reopen bool) {
	r := seedBenchRun(b, 5000)
	var own [3]time.Duration
	for b.Loop() {
		b.StopTimer()
		r.seedToEdge(b, reopen)
		b.StartTimer()
		for k := range own {
			exchange := state.ExchangeTime(r.br)
			start := time.Now()
			r.save(b)
			own[k] += time.Since(start) - (state.ExchangeTime(r.br) - exchange)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(ms(own[0]), "plain-ms/op")
	b.ReportMetric(ms(own[1]), "summaries-ms/op")
	b.ReportMetric(ms(own[2]), "ledger+log-ms/op")
}

// seedToEdge seeds the run up to iteration X98 of the next hundred and
// collects the local cache; with reopen, a new Branch on the same cache
// takes the run over, as a resumed run's process would.
func (r *benchRun) seedToEdge(b *testing.B, reopen bool) {
	edge := r.cp.Iteration - r.cp.Iteration%100 + 98
	if edge <= r.cp.Iteration {
		edge += 100
	}
	if err := state.SeedRun(b.Context(), r.br, r.cp, edge, benchCommit); err != nil {
		b.Fatal(err)
	}
	if err := state.CollectCache(r.br); err != nil {
		b.Fatal(err)
	}
	if !reopen {
		return
	}
	cache := r.br.Path()
	if err := r.br.Close(); err != nil {
		b.Fatal(err)
	}
	r.br = openBranch(b, r.url, r.root, cache)
	cp, err := r.br.Load(b.Context(), r.cp.RunID)
	if err != nil {
		b.Fatal(err)
	}
	r.cp = cp
}

// BenchmarkBranchLoadRestore measures resuming a run 1,000 iterations long
// on another machine: a new Branch with an empty local repository, Load
// (which fetches the branch head at depth 1 over file://) and, in the
// second case, Restore of its 200-file workspace into an empty loop root.
// "warm" is a later process on the same machine: the local repository
// already holds the head, and Load only asks the remote where it is.
func BenchmarkBranchLoadRestore(b *testing.B) {
	bare := newBare(b, b.TempDir(), "state.git")
	root := benchWorkspace(b, 200)
	saveBenchRun(b, openBranch(b, "file://"+bare, root, b.TempDir()), root, 1000)
	warmCache := b.TempDir()
	run := func(b *testing.B, cache func() string, restore bool) {
		for b.Loop() {
			br, err := state.OpenBranch(b.Context(), state.BranchOptions{
				Root: b.TempDir(), Branch: "loop-state", Remote: "file://" + bare, Cache: cache(),
			})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := br.Load(b.Context(), "bench/main"); err != nil {
				b.Fatal(err)
			}
			if restore {
				if n, err := br.Restore(b.Context(), "bench/main"); err != nil || n != 200 {
					b.Fatalf("Restore = %d, %v; want 200 files", n, err)
				}
			}
			br.Close()
		}
	}
	b.Run("cold/load", func(b *testing.B) { run(b, b.TempDir, false) })
	b.Run("cold/load+restore", func(b *testing.B) { run(b, b.TempDir, true) })
	b.Run("warm/load", func(b *testing.B) { run(b, func() string { return warmCache }, false) })
}

// benchWorkspace is a loop root of n small files in 10 directories, an
// hour old (recent files are always re-read by the workspace hasher).
func benchWorkspace(b *testing.B, n int) string {
	root := b.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("pkg%d", i%10), fmt.Sprintf("file%03d.go", i))
		writeFile(b, p, fmt.Sprintf("package pkg%d\n\nconst N%d = %d\n", i%10, i, i))
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// touch changes one file of the workspace, as iteration n's builder would.
func touch(b *testing.B, root string, n int) {
	writeFile(b, filepath.Join(root, "pkg0", "file000.go"), fmt.Sprintf("package pkg0\n\nconst Iteration = %d\n", n))
}

// saveBenchRun saves iterations 1 to n of the run bench/main.
func saveBenchRun(b *testing.B, br *state.Branch, root string, n int) *state.Checkpoint {
	b.Helper()
	cp := newCheckpoint("bench/main")
	for it := 1; it <= n; it++ {
		touch(b, root, it)
		cp.Iteration = it
		if err := br.Save(b.Context(), cp, benchCommit(it)); err != nil {
			b.Fatal(err)
		}
	}
	return cp
}
