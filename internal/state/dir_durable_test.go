package state_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
)

// savedTwice saves iterations 1 and 2 of run id in a store at dir, and
// returns the checkpoint and the run's directory. The first save of a Dir
// waits for the disk; the second, on top of a checkpoint the first's flush
// made durable, does not (the fast path), and its checkpoint.json says
// what it wrote. With crash set, the machine crashes as the second save's
// flush is about to fsync the run's directory: that flush never ends (the
// Dir is left as it is), so the checkpoint kept durable is the first.
// Otherwise the Dir is closed, every flush done.
func savedTwice(t *testing.T, dir, id string, crash bool) (*state.Checkpoint, string) {
	t.Helper()
	d, err := state.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	flushes, down := 0, make(chan struct{})
	state.SetFlush(d, func(rel string) error {
		if flushes++; crash && flushes == 2 {
			<-down
			return errors.New("the machine crashed")
		}
		return nil
	})
	t.Cleanup(func() {
		close(down)
		_ = d.Close() // the crashed flush ends before the directory goes
	})
	cp := newCheckpoint(id)
	run := filepath.Join(dir, "runs", filepath.FromSlash(id))
	for n := 1; n <= 2; n++ {
		cp.Iteration = n
		if err := d.Save(t.Context(), cp, commitFor(n)); err != nil {
			t.Fatal(err)
		}
		if got, want := written(t, filepath.Join(run, "checkpoint.json")), n == 2; got != want {
			t.Fatalf("save %d: checkpoint.json says what it wrote: %v, want %v (the fast path is for saves after the first)", n, got, want)
		}
		if n == 1 || !crash {
			if err := d.Durable(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !crash {
		if err := d.Durable(); err != nil {
			t.Fatal(err)
		}
	}
	return cp, run
}

// written reports whether the checkpoint file at path lists what its save
// wrote without waiting for the disk.
func written(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	_, ok := m["written"]
	return ok
}

// TestTornCheckpointFallsBack: a crash of the machine before a fast-path
// save's flush ended can leave checkpoint.json, or any file it names, torn
// (empty, short, zeroed). The load then finds the checkpoint before, kept
// durable, and the next save goes on from it as if the torn one had never
// been made.
func TestTornCheckpointFallsBack(t *testing.T) {
	t.Parallel()
	truncate := func(rel string, size func(int64) int64) func(t *testing.T, run string) {
		return func(t *testing.T, run string) {
			info, err := os.Stat(filepath.Join(run, rel))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(run, rel), size(info.Size())); err != nil {
				t.Fatal(err)
			}
		}
	}
	// zero zeroes the last n bytes of rel (all of them when n < 0).
	zero := func(rel string, n int64) func(t *testing.T, run string) {
		return func(t *testing.T, run string) {
			data, err := os.ReadFile(filepath.Join(run, rel))
			if err != nil {
				t.Fatal(err)
			}
			from := max(int64(len(data))-n, 0)
			if n < 0 {
				from = 0
			}
			clear(data[from:])
			writeFile(t, filepath.Join(run, rel), string(data))
		}
	}
	for _, c := range []struct {
		name string
		tear func(t *testing.T, run string)
	}{
		{"chunk empty", truncate("ledger/0001.jsonl", func(int64) int64 { return 0 })},
		{"chunk short", truncate("ledger/0001.jsonl", func(n int64) int64 { return n - 1 })},
		{"summary zeroed", zero("summaries/0002.md", -1)},
		{"log short", truncate("run.log", func(n int64) int64 { return n - 3 })},
		{"log tail zeroed", zero("run.log", 4)},
		{"checkpoint zeroed", zero("checkpoint.json", -1)},
		{"checkpoint tail zeroed", zero("checkpoint.json", 16)},
		{"checkpoint short", truncate("checkpoint.json", func(n int64) int64 { return n / 2 })},
		{"checkpoint empty", truncate("checkpoint.json", func(int64) int64 { return 0 })},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cp, run := savedTwice(t, dir, "torn/main", true)
			c.tear(t, run)
			r := openStore(t, dir)
			loaded, err := r.Load(t.Context(), cp.RunID)
			if err != nil {
				t.Fatalf("load after the tear: %v; want the checkpoint before it", err)
			}
			if loaded.Iteration != 1 || loaded.LedgerChunks != 1 {
				t.Fatalf("load after the tear: iteration %d, %d chunks; want iteration 1, 1 chunk", loaded.Iteration, loaded.LedgerChunks)
			}
			checkCommitted(t, r, cp.RunID, string(commitFor(1).Ledger), string(commitFor(1).Log))
			// The run goes on from iteration 1: iteration 2 is done again.
			d := openStore(t, dir)
			again := *loaded
			again.Iteration = 2
			redo := commitFor(2)
			redo.Summary = "# Iteration 2, again\n"
			if err := d.Save(t.Context(), &again, redo); err != nil {
				t.Fatal(err)
			}
			r = openStore(t, dir)
			if got, err := r.Load(t.Context(), cp.RunID); err != nil || got.Iteration != 2 || got.LedgerChunks != 2 {
				t.Fatalf("after the save that redid iteration 2: %+v, %v", got, err)
			}
			checkCommitted(t, r, cp.RunID, string(commitFor(1).Ledger)+string(redo.Ledger), string(commitFor(1).Log)+string(redo.Log))
			if s, err := r.Summary(t.Context(), cp.RunID, 2); err != nil || s != redo.Summary {
				t.Errorf("Summary(2) = %q, %v; want %q", s, err, redo.Summary)
			}
		})
	}
}

// TestUntornCheckpointStands: the fallback is for a checkpoint that is
// torn, nothing else. A checkpoint.json that is whole but was not written
// by this build (another format version, another run) is an error, as is
// a torn one with no durable checkpoint kept before it; and a checkpoint
// whose files are whole loads as saved.
func TestUntornCheckpointStands(t *testing.T) {
	t.Parallel()
	t.Run("whole", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cp, _ := savedTwice(t, dir, "whole/main", true)
		if got, err := openStore(t, dir).Load(t.Context(), cp.RunID); err != nil || got.Iteration != 2 {
			t.Fatalf("load: %+v, %v; want iteration 2", got, err)
		}
	})
	t.Run("another version", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cp, run := savedTwice(t, dir, "version/main", true)
		path := filepath.Join(run, "checkpoint.json")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, strings.Replace(string(data), fmt.Sprintf(`"version": %d`, state.Version), `"version": 99`, 1))
		if _, err := openStore(t, dir).Load(t.Context(), cp.RunID); err == nil || !strings.Contains(err.Error(), "version 99") {
			t.Fatalf("load of a checkpoint of format version 99: %v; want the version refused", err)
		}
	})
	t.Run("torn, nothing kept", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cp, run := savedTwice(t, dir, "alone/main", true)
		if err := os.Remove(filepath.Join(run, ".checkpoint.json.prev")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(run, "checkpoint.json"), "{\"version\": 1, \"run_")
		if _, err := openStore(t, dir).Load(t.Context(), cp.RunID); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Fatalf("load of a torn checkpoint with none kept before it: %v; want it corrupt", err)
		}
	})
}

// TestFastPathNeverTouchesTheKeptCheckpoint: what the durable checkpoint
// kept as .checkpoint.json.prev covers is never written without waiting
// for the disk: a save that goes back, a second save of an iteration and
// the first save of a Dir wait, and each flush keeps the checkpoint it
// made durable.
func TestFastPathNeverTouchesTheKeptCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cp, run := savedTwice(t, dir, "kept/main", false)
	kept := func() int {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(run, ".checkpoint.json.prev"))
		if err != nil {
			t.Fatal(err)
		}
		var k state.Checkpoint
		if err := json.Unmarshal(data, &k); err != nil {
			t.Fatal(err)
		}
		return k.Iteration
	}
	if got := kept(); got != 2 {
		t.Fatalf("kept iteration %d after the second save was made durable, want 2", got)
	}
	d := openStore(t, dir)
	for _, s := range []struct {
		name      string
		iteration int
		fast      bool
	}{
		{"the first save of a Dir", 3, false},
		{"the next", 4, true},
		{"a second save of an iteration", 4, false},
		{"one that goes back", 2, false},
		{"the next after it", 3, true},
	} {
		cp.Iteration = s.iteration
		c := commitFor(s.iteration)
		c.Ledger = bytes.ToUpper(c.Ledger)
		if err := d.Save(t.Context(), cp, c); err != nil {
			t.Fatal(err)
		}
		if got := written(t, filepath.Join(run, "checkpoint.json")); got != s.fast {
			t.Errorf("%s (iteration %d): fast path %v, want %v", s.name, s.iteration, got, s.fast)
		}
		if err := d.Durable(); err != nil {
			t.Fatal(err)
		}
		if got := kept(); got != s.iteration {
			t.Errorf("%s: kept iteration %d once durable, want %d", s.name, got, s.iteration)
		}
	}
}
