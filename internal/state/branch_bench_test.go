package state_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/state"
)

// BenchmarkBranchSave measures one save of a run 5 iterations long and of
// one 5,000 iterations long, on a branch in a bare repository reached over
// file:// (so git-receive-pack runs as a child process, as a real push
// would on the server). Each iteration is a chunk of 20 events, ~2 KiB of
// log and a summary (benchCommit), and the measured save changes one file
// of a 200-file workspace. The run is committed by SeedRun (the files its
// saves would leave, pushed as one commit: 5,000 pushes would take
// minutes), and the local cache collected, as a long run's would have
// been. Each measured save is the run's next iteration, sending what a
// real one sends (a few dozen saves do not change a run's length much).
// The cost must not grow with the run; scripts/bench.sh compares the two
// (medians of several runs, which interleave them, so that drift hits
// both alike).
//
// Besides the time, it reports the CPU time per save of this process
// (self-cpu-ms/op: the store's own work, including writing the saves'
// objects to the local repository after Save returned, all of them) and of the git
// processes it waited for (git-cpu-ms/op: receive-pack and its children),
// and splits each save's time in two: exchange-ms/op, the receive-pack
// exchange (building the pack and git's work until it exits), and
// ours-ms/op, the rest of the save (the store's own work on the critical
// path). BenchmarkReceivePack (package gitremote) measures the push
// exchange alone.
func BenchmarkBranchSave(b *testing.B) {
	for _, length := range []int{5, 5000} {
		b.Run(fmt.Sprintf("iteration=%d", length), func(b *testing.B) {
			bare := newBare(b, b.TempDir(), "state.git")
			root := benchWorkspace(b, 200)
			br := openBranch(b, "file://"+bare, root, b.TempDir())
			cp := newCheckpoint("bench/main")
			if err := state.SeedRun(b.Context(), br, cp, length, benchCommit); err != nil {
				b.Fatal(err)
			}
			if err := state.CollectCache(br); err != nil {
				b.Fatal(err)
			}
			self, git := cpuTimes()
			exchange := state.ExchangeTime(br)
			var saving time.Duration
			for b.Loop() {
				cp.Iteration++
				touch(b, root, cp.Iteration)
				start := time.Now()
				if err := br.Save(b.Context(), cp, benchCommit(cp.Iteration)); err != nil {
					b.Fatal(err)
				}
				saving += time.Since(start)
			}
			if err := state.WriteHeld(br); err != nil { // the saves' CPU time includes writing their objects
				b.Fatal(err)
			}
			self2, git2 := cpuTimes()
			exchange = state.ExchangeTime(br) - exchange
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
			b.ReportMetric(ms(self2-self), "self-cpu-ms/op")
			b.ReportMetric(ms(git2-git), "git-cpu-ms/op")
			b.ReportMetric(ms(exchange), "exchange-ms/op")
			b.ReportMetric(ms(saving-exchange), "ours-ms/op")
		})
	}
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
