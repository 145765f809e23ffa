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

// fifoBound bounds the wait for a load that must not block on a FIFO:
// without the defence it blocks forever, with it it ends at once; a loaded
// machine must not make it fail.
const fifoBound = 2 * time.Minute

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
	case <-time.After(fifoBound):
		t.Fatal("Load blocked on a FIFO")
	}
}

// TestDirSaveNeverBlocksOnAFIFO: an agent can put FIFOs where the next
// save writes: in the next chunk's and summary's places, which the save's
// renames replace without opening them, and in their temporary files'
// and the temporary checkpoint file's, where the saves fail with an error
// instead of waiting for a reader forever, and the committed checkpoint
// stands.
func TestDirSaveNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	run := filepath.Join(dir, "runs", "fifo", "save")
	for _, rel := range []string{"ledger/0001.jsonl", "summaries/0002.md", "ledger/.0002.jsonl.tmp", "summaries/.0003.md.tmp"} {
		p := filepath.Join(run, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip(err)
		}
	}
	cp := newCheckpoint("fifo/save")
	bounded := func(what string, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(fifoBound):
			t.Fatalf("%s blocked on a FIFO", what)
			return nil
		}
	}
	cp.Iteration = 1
	if err := bounded("save 1", func() error { return d.Save(ctx, cp, commitFor(1)) }); err != nil {
		t.Fatal(err) // it writes neither FIFO
	}
	cp.Iteration = 2
	if err := bounded("save 2", func() error { return d.Save(ctx, cp, commitFor(2)) }); err != nil {
		t.Fatal(err) // its renames replace the FIFOs
	}
	next := *cp
	next.Iteration = 3
	if err := bounded("save 3", func() error { return d.Save(ctx, &next, commitFor(3)) }); err == nil {
		t.Error("save 3 wrote into FIFOs")
	}
	if err := os.Remove(filepath.Join(run, "ledger", ".0002.jsonl.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(run, "summaries", ".0003.md.tmp")); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(run, ".checkpoint.json.tmp")
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(tmp, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := bounded("save 3 again", func() error { return d.Save(ctx, &next, commitFor(3)) }); err == nil {
		t.Error("save 3 wrote its checkpoint into a FIFO")
	}
	if got, err := openStore(t, dir).Load(ctx, cp.RunID); err != nil || got.Iteration != 2 {
		t.Errorf("after the refused saves the checkpoint is %+v, %v; want iteration 2", got, err)
	}
	if err := bounded("Close", d.Close); err != nil {
		t.Fatal(err)
	}
}
