package state_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// The tests in this file run against every kind of store: each must
// behave the same through the state.Store interface.

// fixture is one store under test and what the tests need around it.
type fixture struct {
	// open returns a new view of the store as another process on this
	// machine would open it (same directory, same local cache).
	open func(t testing.TB) state.Store
	// elsewhere returns a view from another machine (a fresh cache).
	elsewhere func(t testing.TB) state.Store
	// committed returns a file as the store committed it, if it exists.
	committed func(t testing.TB, rel string) ([]byte, bool)
	// breakSaves makes the next saves of run id fail until fix is called.
	breakSaves func(t testing.TB, id string) (fix func())
}

// storeKinds are the kinds of store the suite runs against.
var storeKinds = []struct {
	name string
	new  func(t testing.TB) *fixture
}{
	{"dir", dirFixture},
	{"branch", branchFixture},
}

// forEachStore runs test against a fresh store of each kind, in parallel.
func forEachStore(t *testing.T, test func(t *testing.T, f *fixture)) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			test(t, k.new(t))
		})
	}
}

func dirFixture(t testing.TB) *fixture {
	dir := t.TempDir()
	open := func(t testing.TB) state.Store { return openStore(t, dir) }
	return &fixture{
		open:      open,
		elsewhere: open,
		committed: func(t testing.TB, rel string) ([]byte, bool) {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			return data, err == nil
		},
		breakSaves: func(t testing.TB, id string) func() {
			// Block the commit point's temporary file: everything before
			// it is written, the commit itself fails.
			block := filepath.Join(dir, "runs", filepath.FromSlash(id), ".checkpoint.json.tmp")
			if err := os.Remove(block); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			if err := os.MkdirAll(block, 0o755); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(block) }
		},
	}
}

func branchFixture(t testing.TB) *fixture {
	bare := newBare(t, t.TempDir(), "state.git")
	root, cache := t.TempDir(), t.TempDir()
	return &fixture{
		open:      func(t testing.TB) state.Store { return openBranch(t, "file://"+bare, root, cache) },
		elsewhere: func(t testing.TB) state.Store { return openBranch(t, bare, t.TempDir(), t.TempDir()) },
		committed: func(t testing.TB, rel string) ([]byte, bool) {
			cmd := subprocess.ForTest(t, "git", "--git-dir="+bare, "cat-file", "-p", "loop-state:"+rel)
			cmd.Env = gitfake.Env(t.TempDir())
			out, err := cmd.Output()
			return out, err == nil
		},
		breakSaves: func(t testing.TB, _ string) func() {
			hook := filepath.Join(bare, "hooks", "pre-receive")
			if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'refused by the test' >&2\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(hook) }
		},
	}
}

// openBranch opens a branch: store on the branch loop-state of remote,
// snapshotting root, with its local repository in cache.
func openBranch(t testing.TB, remote, root, cache string) *state.Branch {
	t.Helper()
	b, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: root, Branch: "loop-state", Remote: remote, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// setClock makes s stamp checkpoints with now.
func setClock(s state.Store, now func() time.Time) {
	switch s := s.(type) {
	case *state.Dir:
		state.SetClock(s, now)
	case *state.Branch:
		state.SetBranchClock(s, now)
	}
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

// checkCommitted checks a run's committed ledger and log.
func checkCommitted(t *testing.T, s state.Store, id, wantLedger, wantLog string) {
	t.Helper()
	ledger, err := s.Ledger(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantLedger, string(ledger)); diff != "" {
		t.Errorf("Ledger (-want +got):\n%s", diff)
	}
	log, err := s.Log(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantLog, string(log)); diff != "" {
		t.Errorf("Log (-want +got):\n%s", diff)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		ctx := t.Context()
		cp := newCheckpoint("quickstart/pr-12")
		var wantLedger, wantLog []byte
		for n := 1; n <= 4; n++ {
			cp.Iteration = n
			cp.Decisions = append(cp.Decisions, gate.Decision{Goal: fmt.Sprint("g", n), Approved: true, By: "alice", Snapshot: "abc"})
			c := commitFor(n)
			if err := s.Save(ctx, cp, c); err != nil {
				t.Fatal(err)
			}
			wantLedger = append(wantLedger, c.Ledger...)
			wantLog = append(wantLog, c.Log...)
		}
		// A save that adds nothing to the ledger or the summaries (a cancel).
		cp.Status = state.Cancelled
		if err := s.Save(ctx, cp, state.Commit{Log: []byte("cancelled\n")}); err != nil {
			t.Fatal(err)
		}
		wantLog = append(wantLog, "cancelled\n"...)

		if got, want := [3]int64{int64(cp.LedgerChunks), int64(cp.LedgerEvents), cp.LogBytes}, [3]int64{4, 10, int64(len(wantLog))}; got != want {
			t.Errorf("chunks, events, log bytes = %v, want %v", got, want)
		}
		if cp.Version != state.Version || cp.UpdatedAt.IsZero() {
			t.Errorf("version %d, updated at %v: Save did not stamp them", cp.Version, cp.UpdatedAt)
		}

		// Read back as the next process would, on another machine if the
		// store spans machines.
		r := f.elsewhere(t)
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
		reviews, ok := f.committed(t, "runs/quickstart/pr-12/reviews.json")
		var decisions []gate.Decision
		if err := json.Unmarshal(reviews, &decisions); !ok || err != nil {
			t.Fatalf("reviews.json (found: %v): %v", ok, err)
		}
		if diff := cmp.Diff(cp.Decisions, decisions); diff != "" {
			t.Errorf("reviews.json (-checkpoint +file):\n%s", diff)
		}
	})
}

func TestStoreLock(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		a, b := f.open(t), f.open(t)
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
	})
}

// TestStoreConcurrentRuns saves three runs at once through one store while
// another goroutine reads.
func TestStoreConcurrentRuns(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		ids := []string{"loop/a", "loop/b", "other/c"}
		var wg sync.WaitGroup
		errs := make([]error, len(ids)+1)
		stop := make(chan struct{})
		for i, id := range ids {
			wg.Go(func() {
				cp := newCheckpoint(id)
				for n := 1; n <= 20 && errs[i] == nil; n++ {
					cp.Iteration = n
					errs[i] = s.Save(t.Context(), cp, commitFor(n%4+1))
				}
			})
		}
		reader := sync.WaitGroup{}
		reader.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Runs(t.Context()); err != nil {
					errs[len(ids)] = err
					return
				}
			}
		})
		wg.Wait()
		close(stop)
		reader.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			var ledger, log string
			for n := 1; n <= 20; n++ {
				ledger += string(commitFor(n%4 + 1).Ledger)
				log += string(commitFor(n%4 + 1).Log)
			}
			checkCommitted(t, f.elsewhere(t), id, ledger, log)
		}
	})
}
