package state_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
)

// TestCrashMidSaveKeepsThePreviousCheckpoint: a save that stops before its
// commit, however far it got (the process killed, the machine crashed, the
// commit failing), leaves the checkpoint before it loadable, with its
// ledger, log and summaries as committed; the next save goes on from it as
// if the stopped one had never been made.
func TestCrashMidSaveKeepsThePreviousCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	cp := newCheckpoint("crash/main")
	for n := 1; n <= 2; n++ {
		cp.Iteration = n
		if err := d.Save(ctx, cp, commitFor(n)); err != nil {
			t.Fatal(err)
		}
	}
	run := filepath.Join(dir, "runs", "crash", "main")
	// Save 3 writes every file, then its commit fails: a directory is
	// where checkpoint.json's temporary file goes.
	block := filepath.Join(run, ".checkpoint.json.tmp")
	if err := os.MkdirAll(block, 0o755); err != nil {
		t.Fatal(err)
	}
	next := *cp
	next.Iteration = 3
	if err := d.Save(ctx, &next, commitFor(3)); err == nil {
		t.Fatal("save 3 committed with its temporary checkpoint blocked")
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	// What a machine crash mid-save can leave besides: torn temporary
	// files, written but never renamed.
	writeFile(t, block, "{\"version\": 1, \"run_")
	writeFile(t, filepath.Join(run, "ledger", ".0002.jsonl.tmp"), "{\"torn\":tr")
	writeFile(t, filepath.Join(run, "summaries", ".0003.md.tmp"), "half a sum")

	fresh := openStore(t, dir)
	got, err := fresh.Load(ctx, cp.RunID)
	if err != nil || got.Iteration != 2 {
		t.Fatalf("load after the stopped save: %+v, %v; want iteration 2", got, err)
	}
	checkCommitted(t, fresh, cp.RunID, string(commitFor(1).Ledger)+string(commitFor(2).Ledger),
		string(commitFor(1).Log)+string(commitFor(2).Log))
	if s, err := fresh.Summary(ctx, cp.RunID, 3); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Summary(3) = %q, %v; want ErrNotFound: the stopped save's summary is not committed", s, err)
	}
	next = *got
	next.Iteration = 3
	if err := fresh.Save(ctx, &next, commitFor(3)); err != nil {
		t.Fatal(err)
	}
	checkCommitted(t, openStore(t, dir), cp.RunID,
		string(commitFor(1).Ledger)+string(commitFor(2).Ledger)+string(commitFor(3).Ledger),
		string(commitFor(1).Log)+string(commitFor(2).Log)+string(commitFor(3).Log))
}

// TestBadCheckpointRefused: a checkpoint.json that this build did not
// write (another format version, torn by hand) is an error, never taken
// for no checkpoint.
func TestBadCheckpointRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"another version", func(s string) string {
			return strings.Replace(s, fmt.Sprintf(`"version": %d`, state.Version), `"version": 99`, 1)
		}, "version 99"},
		{"torn", func(string) string { return "{\"version\": 1, \"run_" }, "corrupt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cp := newCheckpoint("bad/main")
			cp.Iteration = 1
			if err := openStore(t, dir).Save(t.Context(), cp, commitFor(1)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "runs", "bad", "main", "checkpoint.json")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, c.edit(string(data)))
			if _, err := openStore(t, dir).Load(t.Context(), cp.RunID); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("load: %v; want an error saying %q", err, c.want)
			}
		})
	}
}
