//go:build unix

package isolate

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSwappedInFIFOFailsFast: between the lstat that finds a regular file
// and the open that reads it, an agent can put a FIFO in its place; an
// open(2) of a FIFO blocks until a writer comes, which no context can
// interrupt. The copy and the hash must report the path as changed at
// once instead. (The swap is simulated by calling them on the FIFO with
// the inode the lstat saw.)
func TestSwappedInFIFOFailsFast(t *testing.T) {
	t.Parallel()
	srcDir, dstDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(srcDir, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(srcDir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	if err := os.Remove(filepath.Join(srcDir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(srcDir, "a.txt"), 0o644); err != nil {
		t.Skip(err)
	}
	src, err := os.OpenRoot(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenRoot(dstDir)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	for name, call := range map[string]func() error{
		"copyFile": func() error { _, err := copyFile(src, dst, "a.txt", uint64(ino), true); return err },
		"hashFile": func() error { _, _, err := hashFile(src, "a.txt", uint64(ino)); return err },
		"readRules": func() error {
			_, err := readRules(src, "a.txt")
			if err == nil {
				return errChanged // a FIFO holds no rules; nil is right
			}
			return err
		},
	} {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			if !errors.Is(err, errChanged) {
				t.Errorf("%s on a FIFO: %v, want errChanged", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s blocked on a FIFO", name)
		}
	}
}
