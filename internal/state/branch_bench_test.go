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
// one 500 iterations long, on a branch in a bare repository reached over
// file:// (so git-receive-pack runs as a child process, as a real push
// would on the server). Each iteration is a chunk of 20 events, ~2 KiB of
// log and a summary (benchCommit), and changes one file of a 200-file
// workspace. Every measured save redoes the same next iteration from the
// same checkpoint, as a resume after a crash would, so the run's length
// stays fixed while it is timed. The cost must not grow with the run;
// compare the two with
//
//	for i in 1 2 3 4 5 6; do go test -run '^$' -bench '^BenchmarkBranchSave$' -count 1 ./state/; done |
//	  awk '/iteration=5-/ {a += $3; na++} /iteration=500-/ {b += $3; nb++}
//	       END {printf "iteration 500 / iteration 5: %.2f (goal <= 1.5)\n", (b/nb) / (a/na)}'
//
// Separate runs interleave the two, so that drift (the page cache, the
// child processes) hits both alike.
func BenchmarkBranchSave(b *testing.B) {
	for _, length := range []int{5, 500} {
		b.Run(fmt.Sprintf("iteration=%d", length), func(b *testing.B) {
			bare := newBare(b, b.TempDir(), "state.git")
			root := benchWorkspace(b, 200)
			br := openBranch(b, "file://"+bare, root, b.TempDir())
			cp := saveBenchRun(b, br, root, length)
			base := *cp
			base.Iteration = length + 1
			c := benchCommit(length + 1)
			touch(b, root, length+1)
			for b.Loop() {
				next := base
				if err := br.Save(b.Context(), &next, c); err != nil {
					b.Fatal(err)
				}
			}
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
