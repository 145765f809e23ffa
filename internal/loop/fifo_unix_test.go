//go:build unix

package loop_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
)

// TestLoadNeverBlocksOnAFIFO: the config lies in the loop root, where an
// agent can put a FIFO in its place between two runs; open(2) of a FIFO
// waits for a writer forever. Load must fail at once instead.
func TestLoadNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "loop.toml")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := loop.Load(path)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load of a FIFO = %v, want an error saying it is not a regular file", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
