package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// buildTree10k writes 10,000 small files in 100 directories under a new
// temporary root, with mtimes an hour old as in a checked-out repository
// (files modified within racyWindow of a snapshot are always re-read).
func buildTree10k(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	old := time.Now().Add(-time.Hour)
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\nbuild/\n!keep.log\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%02d", d/10), fmt.Sprintf("dir%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
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

func BenchmarkSnapshot10k(b *testing.B) {
	root := buildTree10k(b)
	want, err := NewHasher(root).Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, h func() *Hasher) {
		for b.Loop() {
			got, err := h().Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			if got != want {
				b.Fatalf("Snapshot() = %s, want %s", got, want)
			}
		}
	}
	b.Run("cold", func(b *testing.B) {
		run(b, func() *Hasher { return NewHasher(root) })
	})
	b.Run("warm", func(b *testing.B) {
		h := NewHasher(root)
		if _, err := h.Snapshot(); err != nil {
			b.Fatal(err)
		}
		run(b, func() *Hasher { return h })
	})
	b.Run("files", func(b *testing.B) {
		h := NewHasher(root)
		for b.Loop() {
			if _, err := h.Files(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
