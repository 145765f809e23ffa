package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	want, err := NewHasher(root).Snapshot(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, h func() *Hasher) {
		for b.Loop() {
			got, err := h().Snapshot(b.Context())
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
		if _, err := h.Snapshot(b.Context()); err != nil {
			b.Fatal(err)
		}
		run(b, func() *Hasher { return h })
	})
	b.Run("files", func(b *testing.B) {
		h := NewHasher(root)
		for b.Loop() {
			if _, err := h.Files(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// buildTree100 writes 100 small files in 10 directories under a new
// temporary root with .loop ignored, an hour old: the spawn-floor
// benchmark's checkout (runner.spawnRoot), with a .git directory.
func buildTree100(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	old := time.Now().Add(-time.Hour)
	files := map[string]string{".gitignore": ".loop/\n", ".git/info/exclude": "# none\n", ".git/HEAD": "ref: refs/heads/main\n"}
	for i := range 100 {
		files[fmt.Sprintf("src/d%d/f%02d.txt", i/10, i)] = fmt.Sprintf("file %d\n", i)
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkScanUncarried100 is the listing the runner's ignored-file
// scrub takes before every measurement, on the spawn-floor checkout.
func BenchmarkScanUncarried100(b *testing.B) {
	root := buildTree100(b)
	for b.Loop() {
		if _, err := ScanUncarried(b.Context(), root); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshot100 is the snapshot a measurement takes, with the
// stat cache warm, on the spawn-floor checkout.
func BenchmarkSnapshot100(b *testing.B) {
	root := buildTree100(b)
	h := NewHasher(root)
	if _, err := h.Snapshot(b.Context()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := h.Snapshot(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanCached100 is the guard's scan of protected paths
// (Writer.ScanCached, cache warm) on the spawn-floor checkout: every
// directory entered, the files of one kept.
func BenchmarkScanCached100(b *testing.B) {
	root := buildTree100(b)
	w, err := OpenWriter(root)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	keep := func(rel string) bool { return rel == ".gitignore" || strings.HasPrefix(rel, "src/d0/") }
	descend := func(rel string) bool { return rel != ".git" && rel != ".loop" }
	c := NewScanCache()
	want, err := w.ScanCached(b.Context(), "", descend, keep, c)
	if err != nil || len(want) != 11 { // .gitignore and the 10 files of src/d0
		b.Fatalf("ScanCached: %d entries, %v; want 11", len(want), err)
	}
	for b.Loop() {
		if got, err := w.ScanCached(b.Context(), "", descend, keep, c); err != nil || len(got) != len(want) {
			b.Fatalf("ScanCached: %d entries, %v; want %d", len(got), err, len(want))
		}
	}
}

// BenchmarkSnapshot10kTextAuto is BenchmarkSnapshot10k/warm in a root
// whose .gitattributes says `* text=auto` (common in repositories), with
// one deeper file: every file's attributes are worked out each time.
func BenchmarkSnapshot10kTextAuto(b *testing.B) {
	root := buildTree10k(b)
	for rel, content := range map[string]string{".gitattributes": "* text=auto\n*.png binary\n", "pkg05/.gitattributes": "*.go eol=lf\n"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	h := NewHasherWith(root, Checkout{Base: NoBase})
	if _, err := h.Certify(b.Context()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := h.Certify(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotRepo is a warm snapshot of the checkout named by
// LOOP_BENCH_REPO (a large one: the goal is 100,000 files), with
// `git status` timed beside it in every op: git-ratio is what a snapshot
// costs against it. Run it under /usr/bin/time -v for the peak RSS. It
// is skipped without the variable.
func BenchmarkSnapshotRepo(b *testing.B) {
	root := os.Getenv("LOOP_BENCH_REPO")
	if root == "" {
		b.Skip("LOOP_BENCH_REPO not set")
	}
	h := NewHasher(root)
	if _, err := h.Snapshot(b.Context()); err != nil {
		b.Fatal(err)
	}
	var snap, git time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := h.Snapshot(b.Context()); err != nil {
			b.Fatal(err)
		}
		snap += time.Since(start)
		start = time.Now()
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git status: %v\n%s", err, out)
		}
		git += time.Since(start)
	}
	b.ReportMetric(float64(snap)/float64(git), "git-ratio")
}
