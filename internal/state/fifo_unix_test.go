//go:build unix

package state_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/state"
)

// TestDirStoreNeverBlocksOnAFIFO: .loop/state lies in the loop root, where
// an agent can replace a run's checkpoint, ledger chunk or summary with a
// FIFO; reading it must fail at once, not wait for a writer forever.
func TestDirStoreNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := context.Background()
	cp := newCheckpoint("fifo/run")
	if err := d.Save(ctx, cp, state.Commit{Ledger: []byte("{}\n"), Events: 1, Summary: "it 1"}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"checkpoint.json", "summaries/0001.md", "ledger/0000.jsonl"} {
		p := filepath.Join(dir, "runs", "fifo", "run", filepath.FromSlash(rel))
		if _, err := os.Lstat(p); err != nil {
			continue // this layout does not keep it
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip(err)
		}
	}
	done := make(chan error, 3)
	go func() {
		_, err := d.Load(ctx, "fifo/run")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Load read a FIFO as the checkpoint")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
