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

// TestTornCheckNeverBlocksOnAFIFO: a load checks the log a fast-path
// checkpoint appended to (TestTornCheckpointFallsBack); an agent that puts
// a FIFO in the log's place makes that check fail at once, and the load
// falls back, instead of waiting for a writer forever.
func TestTornCheckNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cp, run := savedTwice(t, dir, "fifo/tail", true)
	log := filepath.Join(run, "run.log")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(log, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan *state.Checkpoint, 1)
	go func() {
		got, err := openStore(t, dir).Load(context.Background(), cp.RunID)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	select {
	case got := <-done:
		if got != nil && got.Iteration != 1 {
			t.Errorf("Load with the log a FIFO: iteration %d, want the checkpoint before (1)", got.Iteration)
		}
	case <-time.After(fifoBound):
		t.Fatal("Load blocked on a FIFO in the log's place")
	}
}

// TestDirSaveNeverBlocksOnAFIFO: an agent can put FIFOs where the next
// save writes (the next chunk and summary, which a save writes in place
// and prepares empty ahead of it, and the temporary checkpoint file):
// saves fail with an error instead of waiting for a reader forever, and
// the committed checkpoint stands.
func TestDirSaveNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	run := filepath.Join(dir, "runs", "fifo", "save")
	for _, rel := range []string{"ledger/0001.jsonl", "summaries/0002.md"} {
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
		t.Fatal(err) // it writes neither FIFO; preparing them after must not hang either
	}
	next := *cp
	next.Iteration = 2
	if err := bounded("save 2", func() error { return d.Save(ctx, &next, commitFor(2)) }); err == nil {
		t.Error("save 2 wrote into FIFOs")
	}
	if err := os.Remove(filepath.Join(run, "ledger", "0001.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(run, "summaries", "0002.md")); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(run, ".checkpoint.json.tmp")
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(tmp, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := bounded("save 2 again", func() error { return d.Save(ctx, &next, commitFor(2)) }); err == nil {
		t.Error("save 2 wrote its checkpoint into a FIFO")
	}
	if got, err := openStore(t, dir).Load(ctx, cp.RunID); err != nil || got.Iteration != 1 {
		t.Errorf("after the refused saves the checkpoint is %+v, %v; want iteration 1", got, err)
	}
	if err := bounded("Close", d.Close); err != nil {
		t.Fatal(err)
	}
}
