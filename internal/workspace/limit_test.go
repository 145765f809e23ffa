package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
)

// sparse makes path a sparse file of size bytes: it costs no disk, and
// reading it all would take minutes.
func sparse(path string, size int64) op {
	return func(t *testing.T, root string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(path))
		mkdirAll(t, filepath.Dir(p))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Skipf("no sparse file of %d bytes here: %v", size, err)
		}
	}
}

const tib = 1 << 40

// TestLargeFileRefused: a file over the limit fails every walk that would
// read it, by its lstat alone (nothing is read: a 1 TiB sparse file is
// refused at once), with an error naming it and its size; a file at the
// limit is hashed; an ignored one is passed by. Without the size check
// the walk reads the terabyte.
func TestLargeFileRefused(t *testing.T) {
	t.Parallel()
	root := build(t, file("small.txt", "ok\n"), sparse("big.bin", tib), file(".gitignore", "ignored/\n"), sparse("ignored/huge", tib))
	walks := map[string]func(h *Hasher) error{
		"Snapshot": func(h *Hasher) error { _, err := h.Snapshot(t.Context()); return err },
		"Certify":  func(h *Hasher) error { _, err := h.Certify(t.Context()); return err },
		"WriteObjects": func(h *Hasher) error {
			_, err := h.WriteObjects(t.Context(), memory.NewStorage())
			return err
		},
	}
	for name, walk := range walks {
		t.Run(name, func(t *testing.T) {
			h := NewHasher(root)
			err := walk(h)
			if n := h.reads.Load(); n > 2 { // .gitignore and small.txt, at most
				t.Errorf("the walk read %d files; the large one must not be read", n)
			}
			if !errors.Is(err, ErrFileTooLarge) {
				t.Fatalf("err = %v, want one wrapping ErrFileTooLarge", err)
			}
			for _, want := range []string{`"big.bin" is 1 TiB (1099511627776 bytes)`, "(100 MiB)"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %q, want it to say %q", err, want)
				}
			}
		})
	}
	if _, err := NewHasher(root).Files(t.Context()); err != nil {
		t.Errorf("Files lists a large file (it reads none): %v", err)
	}
	if _, err := ScanUncarried(t.Context(), root); err != nil {
		t.Errorf("ScanUncarried reads no file: %v", err)
	}

	atLimit := build(t, file("a.txt", "0123456789"))
	for size, ok := range map[int64]bool{10: true, 9: false} {
		_, err := NewHasherWith(atLimit, Checkout{MaxFileSize: size}).Snapshot(t.Context())
		if (err == nil) != ok || (!ok && !errors.Is(err, ErrFileTooLarge)) {
			t.Errorf("a 10-byte file under a limit of %d: err = %v", size, err)
		}
	}
}

// TestWalksStop: every walk and read of the loop root ends when its
// context is done, with an error wrapping the context's cause, and no
// snapshot: here the context was cancelled before the walk.
func TestWalksStop(t *testing.T) {
	t.Parallel()
	root := build(t, file("a/b/c.txt", "c\n"), file("d.txt", "d\n"), file(".gitignore", "out/\n"), file("out/x", "x"))
	mem := memory.NewStorage()
	snap, err := NewHasher(root).WriteObjects(t.Context(), mem)
	if err != nil {
		t.Fatal(err)
	}
	th, err := NewTreeHasher(root, mem)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("the run's budget is spent")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(cause)
	w := openWriter(t, root)
	src, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fi, err := src.Lstat("d.txt")
	if err != nil {
		t.Fatal(err)
	}
	walks := map[string]func() error{
		"Snapshot":      func() error { _, err := NewHasher(root).Snapshot(ctx); return err },
		"Certify":       func() error { _, err := NewHasher(root).Certify(ctx); return err },
		"WriteObjects":  func() error { _, err := NewHasher(root).WriteObjects(ctx, memory.NewStorage()); return err },
		"Files":         func() error { _, err := NewHasher(root).Files(ctx); return err },
		"ScanUncarried": func() error { _, err := ScanUncarried(ctx, root); return err },
		"Scan":          func() error { _, err := w.Scan(ctx, "", everything, everything); return err },
		"Restore":       func() error { _, err := Restore(ctx, build(t), mem, snap); return err },
		"TreeHasher":    func() error { _, err := th.Snapshot(ctx, plumbing.Hash(mustID(t, snap))); return err },
		"HashFile":      func() error { _, _, err := HashFile(ctx, src, "d.txt", fi); return err },
		"CopyNew": func() error {
			dst, err := os.OpenRoot(t.TempDir())
			if err != nil {
				return err
			}
			defer dst.Close()
			_, err = CopyNew(ctx, src, dst, "d.txt", fi)
			return err
		},
		"Writer.Copy": func() error { _, err := openWriter(t, t.TempDir()).Copy(ctx, "d.txt", src, fi); return err },
	}
	for name, walk := range walks {
		t.Run(name, func(t *testing.T) {
			err := walk()
			if !errors.Is(err, cause) || !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want one wrapping the context's cause and context.Canceled", err)
			}
		})
	}
}

// TestHashStopsWithinFile: a walk hashing a large file stops within the
// file's read once its context is done: the 1 TiB here (under a limit
// raised to 2 TiB) would take many minutes to read. The wait is only a
// bound, so that the test cannot hang; it passes as soon as the walk ends.
func TestHashStopsWithinFile(t *testing.T) {
	t.Parallel()
	root := build(t, sparse("big.bin", tib))
	h := NewHasherWith(root, Checkout{MaxFileSize: 2 * tib})
	cause := errors.New("SIGTERM")
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() { _, err := h.Snapshot(ctx); done <- err }()
	for h.reads.Load() == 0 { // the read of big.bin has begun
		select {
		case err := <-done:
			t.Fatalf("the walk ended before reading the file: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	cancel(cause)
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Errorf("err = %v, want one wrapping the cause", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the walk went on reading the file after its context was cancelled")
	}
}

func everything(string) bool { return true }

func mustID(t *testing.T, s Snapshot) ObjectID {
	t.Helper()
	h := plumbing.NewHash(string(s))
	if h.IsZero() {
		t.Fatalf("%q is not an id", s)
	}
	return ObjectID(h)
}
