//go:build unix

package state_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// Environment of the child process of TestBranchCrashConsistency.
const (
	branchSaverURL   = "STATE_TEST_BRANCH_URL" // the remote; set only in the child
	branchSaverRoot  = "STATE_TEST_BRANCH_ROOT"
	branchSaverCache = "STATE_TEST_BRANCH_CACHE"
	branchSaverToken = "STATE_TEST_BRANCH_TOKEN"
	branchCrashSeed  = "STATE_BRANCH_CRASH_SEED" // replays a run of the test
	branchCrashRunID = "crash/pr-1"
)

// TestHelperBranchSaver is not a test: TestBranchCrashConsistency runs the
// test binary again with only this test selected, and kills it. It resumes
// the run from the branch, says "ready", then saves over HTTP in a loop,
// changing its workspace each time, until it dies.
func TestHelperBranchSaver(t *testing.T) {
	url := os.Getenv(branchSaverURL)
	if url == "" {
		t.Skip("the child process of TestBranchCrashConsistency")
	}
	if err := saveBranchForever(t, url); err != nil {
		fmt.Fprintln(os.Stderr, "helper saver:", err)
		os.Exit(3)
	}
}

func saveBranchForever(t *testing.T, url string) error {
	root := os.Getenv(branchSaverRoot)
	b, err := state.OpenBranch(t.Context(), state.BranchOptions{
		Root: root, Branch: "loop-state", Remote: url,
		Token: os.Getenv(branchSaverToken), Cache: os.Getenv(branchSaverCache),
	})
	if err != nil {
		return err
	}
	if _, err := b.Lock(branchCrashRunID); err != nil { // held until the kill
		return err
	}
	cp, err := b.Load(t.Context(), branchCrashRunID)
	if errors.Is(err, state.ErrNotFound) {
		cp, err = newCheckpoint(branchCrashRunID), nil
	}
	if err != nil {
		return err
	}
	if _, err := b.Restore(t.Context(), branchCrashRunID); err != nil && !errors.Is(err, state.ErrNotFound) {
		return err
	}
	announce("ready", cp.Iteration)
	for {
		n := cp.Iteration + 1
		if err := os.WriteFile(filepath.Join(root, "progress.txt"), fmt.Appendf(nil, "%d\n", n), 0o644); err != nil {
			return err
		}
		cp.Iteration = n
		c := state.Commit{
			Ledger:  fmt.Appendf(nil, "{\"n\":%d}\n", n),
			Events:  1,
			Log:     fmt.Appendf(nil, "n=%d\n", n),
			Summary: fmt.Sprintf("summary %d\n", n),
		}
		if err := b.Save(t.Context(), cp, c); err != nil {
			return err
		}
		announce("saved", n)
	}
}

// TestBranchCrashConsistency kills a process saving over HTTP with SIGKILL
// at random instants, 12 times, each new process resuming from the branch
// with the local repository the killed one left. After each kill the
// remote repository passes git fsck, the branch head's checkpoint loads
// with exactly the committed ledger, log and summary, nothing committed
// was lost (every save the saver saw return, and at most the one in
// flight besides), and the workspace at the head is the one of its
// iteration. Each round kills the saver a random time after its 0th, 1st
// or 2nd save, so two rounds in three advance the run.
func TestBranchCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 12 processes")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(branchCrashSeed); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", branchCrashSeed, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, branchCrashSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	srv := gitfake.Start(t, gitfake.Options{Tokens: []string{"crash-token"}})
	url, bare := srv.Repo(t, "state.git")
	s := saver{helper: "TestHelperBranchSaver", env: []string{
		branchSaverURL + "=" + url, branchSaverToken + "=crash-token",
		branchSaverRoot + "=" + t.TempDir(), branchSaverCache + "=" + t.TempDir(),
	}}
	committed, midRequest := 0, 0
	for round := range 12 {
		delay := time.Duration(rng.Int64N(int64(250 * time.Millisecond)))
		last := s.kill(t, round%3, delay)
		if srv.InFlight() > 0 {
			midRequest++ // killed while the server was answering it
		}
		srv.Settle(t)
		gitfake.Fsck(t, bare)
		n := checkBranchHead(t, url)
		checkKilledAt(t, round, committed, last, n)
		t.Logf("round %d: killed %v after save %d, at iteration %d", round, delay.Round(time.Millisecond), round%3, n)
		committed = n
	}
	t.Logf("%d of 12 kills came while the server was answering the saver", midRequest)
}

// checkBranchHead checks the run at the branch head, read from a fresh
// machine, and returns its iteration.
func checkBranchHead(t *testing.T, url string) int {
	t.Helper()
	root := t.TempDir()
	b := openBranchHTTP(t, url, "crash-token", root)
	ctx := t.Context()
	cp, err := b.Load(ctx, branchCrashRunID)
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
	var ledger, log bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&ledger, "{\"n\":%d}\n", i)
		fmt.Fprintf(&log, "n=%d\n", i)
	}
	checkCommitted(t, b, branchCrashRunID, ledger.String(), log.String())
	if s, err := b.Summary(ctx, branchCrashRunID, n); err != nil || s != fmt.Sprintf("summary %d\n", n) {
		t.Fatalf("Summary(%d) = %q, %v", n, s, err)
	}
	if _, err := b.Restore(ctx, branchCrashRunID); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(root, "progress.txt")); err != nil || string(data) != fmt.Sprintf("%d\n", n) {
		t.Fatalf("the workspace at iteration %d holds progress %q (%v)", n, data, err)
	}
	return n
}
