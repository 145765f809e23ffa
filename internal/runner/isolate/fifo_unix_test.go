//go:build unix

package isolate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// TestSwappedInFIFOFailsFast: between the lstat that finds a regular file
// and the open that reads it, an agent can put a FIFO in its place; an
// open(2) of a FIFO blocks until a writer comes, which no context can
// interrupt. Reading the state of the path must see the FIFO at once (a
// path that cannot be published), and copying it must fail at once.
// (The swap is simulated by calling them on the FIFO with the lstat
// result of the file.)
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
	w, err := workspace.OpenWriter(dstDir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for name, call := range map[string]func() bool{
		"readState": func() bool {
			st, _, err := readState(t.Context(), src, "a.txt", fi, 1<<20)
			return err == nil && st.kind == blocked
		},
		"Writer.Copy": func() bool { _, err := w.Copy(t.Context(), "a.txt", src, fi); return err != nil },
	} {
		done := make(chan bool, 1)
		go func() { done <- call() }()
		select {
		case ok := <-done:
			if !ok {
				t.Errorf("%s on a FIFO did not refuse it", name)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s blocked on a FIFO", name)
		}
	}
}

// TestFIFOInRootRepositoryFailsFast: an agent that leaves a FIFO in the
// root's .git (in place of the HEAD commit's object, of packed-refs, of
// a pack) must not stall the next Prepare: go-git's plain open of it
// would block for ever. Prepare fails at once, naming the file.
func TestFIFOInRootRepositoryFailsFast(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"head-commit", "packed-refs", "pack", "objects"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			e := repoEnv(t)
			name := filepath.Join(e.root, ".git", target)
			switch target {
			case "head-commit":
				id := strings.TrimSpace(runIn(t, e.root, nil, "git", "rev-parse", "HEAD"))
				name = filepath.Join(e.root, ".git", "objects", id[:2], id[2:])
			case "pack":
				name = filepath.Join(e.root, ".git", "objects", "pack", "pack-0.pack")
			}
			if err := os.RemoveAll(name); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(name, 0o644); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			m := New(e.root, Options{}) // reads the repository afresh
			t.Cleanup(func() { m.Remove() })
			go func() { _, err := m.Prepare(context.Background(), "coder"); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), filepath.Base(name)) {
					t.Errorf("Prepare = %v, want an error naming %s", err, filepath.Base(name))
				}
			case <-time.After(30 * time.Second):
				os.WriteFile(name, nil, 0) // unblock the stuck open before failing
				t.Fatalf("Prepare blocked on a FIFO in the root's repository")
			}
		})
	}
}
