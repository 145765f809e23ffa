package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loop-action/loop-action/internal/workspace"
)

// benchRoot writes files small files in 100 directories, an hour old as
// in a checked-out repository (isolate's benchmarks use the same tree).
func benchRoot(b *testing.B, files int) string {
	b.Helper()
	root := b.TempDir()
	old := time.Now().Add(-time.Hour)
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("dir%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range files / 100 {
			p := filepath.Join(dir, fmt.Sprintf("file%03d.go", f))
			content := fmt.Sprintf("package dir%02d\n\n// File %d of a generated tree.\nconst N%d = %d\n", d, f, f, d*100+f)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

// BenchmarkRootGuard10k measures what guarding the loop root around a wave
// of isolated nodes costs in a 10,000-file root: the first wave (every
// file stored in memory), then a wave after which the root is unchanged,
// and one before which publish changed 10 files (stored anew). Each
// guarded wave is a store before it and a snapshot after it.
func BenchmarkRootGuard10k(b *testing.B) {
	root := benchRoot(b, 10_000)
	b.Run("first-wave", func(b *testing.B) {
		for b.Loop() {
			guardWave(b, workspace.NewHasher(root), memory.NewStorage())
		}
	})
	for _, changed := range []int{0, 10} {
		b.Run(fmt.Sprintf("warm/published=%d", changed), func(b *testing.B) {
			h, s := workspace.NewHasher(root), memory.NewStorage()
			guardWave(b, h, s)
			i := 0
			for b.Loop() {
				b.StopTimer()
				for k := range changed {
					i++
					p := filepath.Join(root, fmt.Sprintf("dir%02d", k%100), "file000.go")
					if err := os.WriteFile(p, []byte(fmt.Sprintf("// changed %d\n", i)), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				guardWave(b, h, s)
			}
		})
	}
}

func guardWave(b *testing.B, h *workspace.Hasher, s *memory.Storage) {
	before, err := h.WriteObjects(b.Context(), s)
	if err != nil {
		b.Fatal(err)
	}
	after, err := h.Snapshot(b.Context())
	if err != nil || after != before {
		b.Fatalf("snapshot %s, %v; want %s", after, err, before)
	}
}
