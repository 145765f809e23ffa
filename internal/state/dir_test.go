package state_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
)

func openStore(t testing.TB, path string) *state.Dir {
	t.Helper()
	d, err := state.OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestTornWriteLeftovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	cp := newCheckpoint("quickstart/pr-1")
	cp.Iteration = 1
	if err := d.Save(ctx, cp, commitFor(1)); err != nil {
		t.Fatal(err)
	}
	// What a save killed before its commit leaves: the next chunk, the next
	// summary, a longer log.
	run := filepath.Join(dir, "runs", "quickstart", "pr-1")
	writeFile(t, filepath.Join(run, "ledger", "0001.jsonl"), "{\"torn\":tr")
	writeFile(t, filepath.Join(run, "summaries", "0002.md"), "garbage summary")
	f, err := os.OpenFile(filepath.Join(run, "run.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("JUNK half a li")
	f.Close()

	// Readers never see them...
	checkCommitted(t, d, cp.RunID, string(commitFor(1).Ledger), string(commitFor(1).Log))
	if _, err := d.Summary(ctx, cp.RunID, 2); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Summary of an uncommitted iteration: %v, want ErrNotFound", err)
	}
	// ...and the next save replaces them.
	cp.Iteration = 2
	if err := d.Save(ctx, cp, commitFor(2)); err != nil {
		t.Fatal(err)
	}
	checkCommitted(t, d, cp.RunID, string(commitFor(1).Ledger)+string(commitFor(2).Ledger),
		string(commitFor(1).Log)+string(commitFor(2).Log))
	raw, err := os.ReadFile(filepath.Join(run, "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("JUNK")) {
		t.Errorf("run.log still holds the torn append:\n%s", raw)
	}
	if s, err := d.Summary(ctx, cp.RunID, 2); err != nil || s != commitFor(2).Summary {
		t.Errorf("Summary(2) = %q, %v; want %q", s, err, commitFor(2).Summary)
	}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNothingWrittenOutsideTheStore(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	store := filepath.Join(base, "store")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	d := openStore(t, store)
	if err := os.MkdirAll(filepath.Join(store, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(store, "runs", "escape")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	cp := newCheckpoint("escape/pr-1")
	if err := d.Save(t.Context(), cp, commitFor(1)); err == nil {
		t.Error("Save through a symlink out of the store succeeded")
	}
	if _, err := d.Lock("escape/pr-1"); err == nil {
		t.Error("Lock through a symlink out of the store succeeded")
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("files appeared outside the store: %v", entries)
	}
}

// TestReviewsRewrittenOnlyWhenTheyChange: a save replaces reviews.json
// only when the decisions differ from what the file holds (an earlier
// save's, or someone else's); otherwise the file, its inode included,
// stays as it was.
func TestReviewsRewrittenOnlyWhenTheyChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	path := filepath.Join(dir, "runs", "quickstart", "pr-1", "reviews.json")
	cp := newCheckpoint("quickstart/pr-1")
	approved := []gate.Decision{{Goal: "docs", Approved: true, By: "alice", Snapshot: "abc"}}
	steps := []struct {
		name      string
		decisions []gate.Decision
		tamper    string // written over reviews.json before the save
		rewritten bool
		want      string
	}{
		{"first save", nil, "", true, "[]\n"},
		{"same decisions", nil, "", false, "[]\n"},
		{"a decision", approved, "", true, "[\n  {\n    \"goal\": \"docs\",\n    \"approved\": true,\n    \"by\": \"alice\",\n    \"snapshot\": \"abc\"\n  }\n]\n"},
		{"same decision", approved, "", false, ""},
		{"replaced by hand", approved, "[]\n", true, ""},
		{"back to none", []gate.Decision{}, "", true, "[]\n"},
	}
	var last string
	for i, s := range steps {
		if s.tamper != "" {
			writeFile(t, path, s.tamper)
		}
		before := stat(t, path)
		cp.Iteration, cp.Decisions = i+1, s.decisions
		if err := d.Save(ctx, cp, commitFor(i+1)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.want == "" {
			s.want = last
		}
		last = string(got)
		if diff := cmp.Diff(s.want, string(got)); diff != "" {
			t.Errorf("%s: reviews.json (-want +got):\n%s", s.name, diff)
		}
		if rewritten := before == nil || !os.SameFile(before, stat(t, path)); rewritten != s.rewritten {
			t.Errorf("%s: reviews.json rewritten = %v, want %v", s.name, rewritten, s.rewritten)
		}
	}
}

// stat is path's lstat, nil when there is no file.
func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
