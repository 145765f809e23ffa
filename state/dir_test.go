package state_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/gate"
	"github.com/loop-action/loop-action/state"
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

func newCheckpoint(id string) *state.Checkpoint {
	return &state.Checkpoint{
		RunID:         id,
		Loop:          "green-build",
		ConfigFile:    ".github/loop.toml",
		Status:        state.Running,
		MaxIterations: 8,
		StartedAt:     time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

// commitFor is the commit of iteration n: n events, a log line, a summary.
func commitFor(n int) state.Commit {
	var ledger bytes.Buffer
	for i := range n {
		fmt.Fprintf(&ledger, "{\"iteration\":%d,\"event\":%d}\n", n, i)
	}
	return state.Commit{
		Ledger:  ledger.Bytes(),
		Events:  n,
		Log:     fmt.Appendf(nil, "iteration %d done\n", n),
		Summary: fmt.Sprintf("# Iteration %d\n\nall good\n", n),
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	cp := newCheckpoint("quickstart/pr-12")
	var wantLedger, wantLog []byte
	for n := 1; n <= 4; n++ {
		cp.Iteration = n
		cp.Decisions = append(cp.Decisions, gate.Decision{Goal: fmt.Sprint("g", n), Approved: true, By: "alice", Snapshot: "abc"})
		c := commitFor(n)
		if err := d.Save(ctx, cp, c); err != nil {
			t.Fatal(err)
		}
		wantLedger = append(wantLedger, c.Ledger...)
		wantLog = append(wantLog, c.Log...)
	}
	// A save that adds nothing to the ledger or the summaries (a cancel).
	cp.Status = state.Cancelled
	if err := d.Save(ctx, cp, state.Commit{Log: []byte("cancelled\n")}); err != nil {
		t.Fatal(err)
	}
	wantLog = append(wantLog, "cancelled\n"...)

	if got, want := [3]int64{int64(cp.LedgerChunks), int64(cp.LedgerEvents), cp.LogBytes}, [3]int64{4, 10, int64(len(wantLog))}; got != want {
		t.Errorf("chunks, events, log bytes = %v, want %v", got, want)
	}
	if cp.Version != state.Version || cp.UpdatedAt.IsZero() {
		t.Errorf("version %d, updated at %v: Save did not stamp them", cp.Version, cp.UpdatedAt)
	}

	// Read back through a fresh Dir, as the next process would.
	r := openStore(t, dir)
	got, err := r.Load(ctx, cp.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp, got); diff != "" {
		t.Errorf("Load (-saved +loaded):\n%s", diff)
	}
	checkCommitted(t, r, cp.RunID, string(wantLedger), string(wantLog))
	for n := 1; n <= 4; n++ {
		s, err := r.Summary(ctx, cp.RunID, n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(commitFor(n).Summary, s); diff != "" {
			t.Errorf("Summary(%d) (-want +got):\n%s", n, diff)
		}
	}
	reviews, err := os.ReadFile(filepath.Join(dir, "runs", "quickstart", "pr-12", "reviews.json"))
	if err != nil {
		t.Fatal(err)
	}
	var decisions []gate.Decision
	if err := json.Unmarshal(reviews, &decisions); err != nil {
		t.Fatalf("reviews.json: %v", err)
	}
	if diff := cmp.Diff(cp.Decisions, decisions); diff != "" {
		t.Errorf("reviews.json (-checkpoint +file):\n%s", diff)
	}
}

func TestSaveFailureLeavesCheckpointUnchanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	cp := newCheckpoint("nightly/main")
	cp.Iteration = 1
	if err := d.Save(ctx, cp, commitFor(1)); err != nil {
		t.Fatal(err)
	}
	before := *cp

	// Block the commit point's temporary file: everything before it is
	// written, the commit itself fails.
	block := filepath.Join(dir, "runs", "nightly", "main", ".checkpoint.json.tmp")
	if err := os.Mkdir(block, 0o755); err != nil {
		t.Fatal(err)
	}
	cp.Iteration = 2
	if err := d.Save(ctx, cp, commitFor(2)); err == nil {
		t.Fatal("Save succeeded with its temporary file blocked")
	}
	cp.Iteration = 1
	if diff := cmp.Diff(&before, cp); diff != "" {
		t.Errorf("failed Save changed cp (-before +after):\n%s", diff)
	}
	loaded, err := d.Load(ctx, cp.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&before, loaded); diff != "" {
		t.Errorf("Load after failed Save (-want +got):\n%s", diff)
	}
	checkCommitted(t, d, cp.RunID, string(commitFor(1).Ledger), string(commitFor(1).Log))

	// The same save, retried once the obstacle is gone, commits.
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	cp.Iteration = 2
	if err := d.Save(ctx, cp, commitFor(2)); err != nil {
		t.Fatal(err)
	}
	checkCommitted(t, d, cp.RunID, string(commitFor(1).Ledger)+string(commitFor(2).Ledger),
		string(commitFor(1).Log)+string(commitFor(2).Log))
}

// checkCommitted checks a run's committed ledger and log.
func checkCommitted(t *testing.T, d *state.Dir, id, wantLedger, wantLog string) {
	t.Helper()
	ledger, err := d.Ledger(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantLedger, string(ledger)); diff != "" {
		t.Errorf("Ledger (-want +got):\n%s", diff)
	}
	log, err := d.Log(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantLog, string(log)); diff != "" {
		t.Errorf("Log (-want +got):\n%s", diff)
	}
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

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := openStore(t, dir), openStore(t, dir)
	unlock, err := a.Lock("nightly/main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock("nightly/main"); !errors.Is(err, state.ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	other, err := b.Lock("nightly/other")
	if err != nil {
		t.Fatalf("Lock of another run: %v", err)
	}
	if err := other(); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Errorf("second unlock: %v", err)
	}
	again, err := b.Lock("nightly/main")
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	if err := again(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Lock("../x"); err == nil {
		t.Error("Lock accepted an invalid run id")
	}
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	d := openStore(t, t.TempDir())
	ids := []string{"loop/a", "loop/b", "other/c"}
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i, id := range ids {
		wg.Go(func() {
			cp := newCheckpoint(id)
			for n := 1; n <= 20 && errs[i] == nil; n++ {
				cp.Iteration = n
				errs[i] = d.Save(t.Context(), cp, commitFor(n%4+1))
			}
		})
	}
	wg.Wait()
	for i, id := range ids {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		var ledger, log string
		for n := 1; n <= 20; n++ {
			ledger += string(commitFor(n%4 + 1).Ledger)
			log += string(commitFor(n%4 + 1).Log)
		}
		checkCommitted(t, d, id, ledger, log)
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
