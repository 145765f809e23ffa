//go:build unix

package state_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/state"
)

const (
	helperStoreEnv = "STATE_TEST_SAVER_STORE" // set in the child: the store to save into
	crashSeedEnv   = "STATE_CRASH_SEED"       // replays a run of TestCrashConsistency
	crashRunID     = "crash/pr-1"
)

// TestHelperSaver is not a test: TestCrashConsistency runs the test binary
// again with only this test selected, and kills it. It resumes the run, says
// "ready", then saves in a tight loop until it dies.
func TestHelperSaver(t *testing.T) {
	store := os.Getenv(helperStoreEnv)
	if store == "" {
		t.Skip("the child process of TestCrashConsistency")
	}
	if err := saveForever(t, store); err != nil {
		fmt.Fprintln(os.Stderr, "helper saver:", err)
		os.Exit(3)
	}
}

func saveForever(t *testing.T, store string) error {
	d, err := state.OpenDir(store)
	if err != nil {
		return err
	}
	if _, err := d.Lock(crashRunID); err != nil { // held until the kill
		return err
	}
	cp, err := d.Load(t.Context(), crashRunID)
	if errors.Is(err, state.ErrNotFound) {
		cp, err = newCheckpoint(crashRunID), nil
	}
	if err != nil {
		return err
	}
	announce("ready", cp.Iteration)
	for {
		n := cp.Iteration + 1
		cp.Iteration = n
		c := state.Commit{
			Ledger:  fmt.Appendf(nil, "{\"n\":%d}\n", n),
			Events:  1,
			Log:     fmt.Appendf(nil, "n=%d\n", n),
			Summary: fmt.Sprintf("summary %d\n", n),
		}
		if err := d.Save(t.Context(), cp, c); err != nil {
			return err
		}
		announce("saved", n)
	}
}

// TestCrashConsistency kills a saving process with SIGKILL at random
// instants, 30 times on the same store, and checks after each kill that the
// run loads, that its ledger and log hold exactly the committed iterations,
// that nothing committed was lost (every save the saver saw return, and at
// most the one in flight besides), and that nothing was written outside
// the store. Each round kills the saver a random time after its 0th, 1st
// or 2nd save, so two rounds in three advance the run.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 30 processes")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", crashSeedEnv, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	base := t.TempDir()
	store, cwd, tmp := filepath.Join(base, "store"), filepath.Join(base, "cwd"), filepath.Join(base, "tmp")
	for _, dir := range []string{cwd, tmp} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := saver{helper: "TestHelperSaver", env: []string{helperStoreEnv + "=" + store, "TMPDIR=" + tmp}, dir: cwd}
	committed := 0
	for round := range 30 {
		delay := time.Duration(rng.Int64N(int64(50 * time.Millisecond)))
		last := s.kill(t, round%3, delay)
		n := checkCrashedStore(t, store)
		checkKilledAt(t, round, committed, last, n)
		t.Logf("round %d: killed %v after save %d, at iteration %d", round, delay.Round(time.Microsecond), round%3, n)
		committed = n
		checkOnlyStore(t, base, cwd, tmp)
	}
}

// checkCrashedStore checks the run left by a killed saver and returns the
// iteration it committed.
func checkCrashedStore(t *testing.T, store string) int {
	t.Helper()
	d := openStore(t, store)
	ctx := t.Context()
	cp, err := d.Load(ctx, crashRunID)
	if errors.Is(err, state.ErrNotFound) {
		return 0 // killed before the first commit
	}
	if err != nil {
		t.Fatal(err)
	}
	n := cp.Iteration
	if cp.LedgerEvents != n || cp.LedgerChunks != n {
		t.Fatalf("checkpoint at iteration %d counts %d events in %d chunks", n, cp.LedgerEvents, cp.LedgerChunks)
	}
	ledger, err := d.Ledger(ctx, crashRunID)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(ledger, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) != n {
		t.Fatalf("ledger has %d lines, the checkpoint %d events:\n%s", len(lines), n, ledger)
	}
	for i, line := range lines {
		var ev struct{ N int }
		if err := json.Unmarshal(line, &ev); err != nil || ev.N != i+1 {
			t.Fatalf("ledger line %d is %q (%v), want {\"n\":%d}", i+1, line, err, i+1)
		}
	}
	var want bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "n=%d\n", i)
	}
	if log, err := d.Log(ctx, crashRunID); err != nil || !bytes.Equal(log, want.Bytes()) {
		t.Fatalf("log (%v):\n%s\nwant the lines n=1 to n=%d", err, log, n)
	}
	if s, err := d.Summary(ctx, crashRunID, n); n > 0 && (err != nil || s != fmt.Sprintf("summary %d\n", n)) {
		t.Fatalf("Summary(%d) = %q, %v", n, s, err)
	}
	return n
}

// checkOnlyStore checks that the saver wrote nothing beside the store, in
// its working directory or in its temporary directory.
func checkOnlyStore(t *testing.T, base, cwd, tmp string) {
	t.Helper()
	for dir, want := range map[string][]string{base: {"cwd", "store", "tmp"}, cwd: nil, tmp: nil} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, want) {
			t.Fatalf("%s holds %q, want %q", dir, names, want)
		}
	}
}
