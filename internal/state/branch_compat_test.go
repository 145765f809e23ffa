package state_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// oldLayoutBranch makes the branch loop-state of bare hold run id, n
// iterations long, as the code before the fan-out wrote it: ledger/,
// summaries/ and log/ flat (ledger/0000.jsonl). It returns the ledger and
// log the run committed.
func oldLayoutBranch(t *testing.T, bare, id string, n int) (ledger, log string) {
	t.Helper()
	dir := t.TempDir()
	run := filepath.Join(dir, "runs", filepath.FromSlash(id))
	cp := newCheckpoint(id)
	cp.Version, cp.Iteration, cp.LedgerChunks = state.Version, n, n
	for i := range n {
		c := commitFor(i + 1)
		cp.LedgerEvents += c.Events
		writeFile(t, filepath.Join(run, "ledger", fmt.Sprintf("%04d.jsonl", i)), string(c.Ledger))
		writeFile(t, filepath.Join(run, "log", fmt.Sprintf("%04d.log", i)), string(c.Log))
		writeFile(t, filepath.Join(run, "summaries", fmt.Sprintf("%04d.md", i+1)), c.Summary)
		ledger, log = ledger+string(c.Ledger), log+string(c.Log)
		cp.LogBytes += int64(len(c.Log))
	}
	data, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(run, "checkpoint.json"), string(data)+"\n")
	writeFile(t, filepath.Join(run, "reviews.json"), "[]\n")
	writeFile(t, filepath.Join(run, "workspace", "a.txt"), "a\n")
	index := filepath.Join(t.TempDir(), "index")
	git := func(args ...string) string {
		return strings.TrimSpace(gitfake.Git(t, dir, append([]string{"--git-dir=" + bare, "--work-tree=" + dir}, args...)...))
	}
	t.Setenv("GIT_INDEX_FILE", index)
	git("add", "-A")
	commit := git("commit-tree", git("write-tree"), "-m", fmt.Sprintf("checkpoint %s iteration %d (running)", id, n))
	git("update-ref", "refs/heads/loop-state", commit)
	return ledger, log
}

// TestBranchReadsOldLayout checks that a run written before the fan-out
// loads and reads whole, and that its next save moves its files into the
// fanned layout, its full hundreds consolidated, without losing any.
func TestBranchReadsOldLayout(t *testing.T) {
	bare := newBare(t, t.TempDir(), "state.git")
	ledger, log := oldLayoutBranch(t, bare, "old/run", 120)
	b := openBranch(t, bare, t.TempDir(), t.TempDir())
	check := func(wantLedger, wantLog string, iterations int) {
		t.Helper()
		checkCommitted(t, b, "old/run", wantLedger, wantLog)
		for _, i := range []int{1, 100, iterations} {
			got, err := b.Summary(t.Context(), "old/run", i)
			if err != nil || got != commitFor(i).Summary {
				t.Errorf("Summary(%d) = %q, %v; want %q", i, got, err, commitFor(i).Summary)
			}
		}
		runs, err := b.Runs(t.Context())
		if err != nil || len(runs) != 1 || runs[0].Iteration != iterations {
			t.Errorf("Runs = %+v, %v; want old/run at iteration %d", runs, err, iterations)
		}
	}
	check(ledger, log, 120)

	cp, err := b.Load(t.Context(), "old/run")
	if err != nil {
		t.Fatal(err)
	}
	cp.Iteration = 121
	next := commitFor(121)
	if err := b.Save(t.Context(), cp, next); err != nil {
		t.Fatal(err)
	}
	check(ledger+string(next.Ledger), log+string(next.Log), 121)
	files := gitfake.Git(t, "", "--git-dir="+bare, "ls-tree", "-r", "--name-only", "loop-state:runs/old/run")
	var flat []string
	for f := range strings.Lines(files) {
		if d, _, ok := strings.Cut(f, "/"); ok && strings.Count(f, "/") == 1 && d != "workspace" {
			flat = append(flat, strings.TrimSpace(f))
		}
	}
	if d := cmp.Diff([]string(nil), flat); d != "" {
		t.Errorf("files left flat after the save (-want +got):\n%s", d)
	}
	// The full hundred 0-99 of each directory is consolidated at once (see
	// TestBranchConsolidates), the hundred the run is in stays fanned out.
	for _, want := range []string{
		"ledger/00/00.jsonl", "ledger/00/01/0120.jsonl", "log/00/00.log", "log/00/01/0120.log",
		"summaries/00/00.md", "summaries/00/01/0121.md",
	} {
		if !strings.Contains(files, want+"\n") {
			t.Errorf("the branch lacks runs/old/run/%s", want)
		}
	}
	gitfake.Fsck(t, bare)
}

// TestBranchGoesBackAcrossBuckets saves a run from a checkpoint older
// than the branch's, whose later chunks lie in other buckets of the
// fan-out: the ledger, the log and the summaries end where the checkpoint
// saved from does, plus the new save.
func TestBranchGoesBackAcrossBuckets(t *testing.T) {
	bare := newBare(t, t.TempDir(), "state.git")
	oldLayoutBranch(t, bare, "old/run", 205)
	b := openBranch(t, bare, t.TempDir(), t.TempDir())
	cp, err := b.Load(t.Context(), "old/run")
	if err != nil {
		t.Fatal(err)
	}
	// The checkpoint of iteration 98, as a resume after a crash there would hold.
	keepLedger, keepLog, events := "", "", 0
	for i := 1; i <= 98; i++ {
		keepLedger += string(commitFor(i).Ledger)
		keepLog += string(commitFor(i).Log)
		events += commitFor(i).Events
	}
	cp.Iteration, cp.LedgerChunks, cp.LedgerEvents, cp.LogBytes = 98, 98, events, int64(len(keepLog))
	next := commitFor(99)
	cp.Iteration = 99
	if err := b.Save(t.Context(), cp, next); err != nil {
		t.Fatal(err)
	}
	checkCommitted(t, b, "old/run", keepLedger+string(next.Ledger), keepLog+string(next.Log))
	if _, err := b.Summary(t.Context(), "old/run", 150); err == nil {
		t.Error("the summary of iteration 150 survived a save from iteration 98")
	}
	if n := strings.Count(gitfake.Git(t, "", "--git-dir="+bare, "ls-tree", "-r", "--name-only", "loop-state:runs/old/run/ledger"), "\n"); n != 99 {
		t.Errorf("the branch holds %d ledger chunks, want 99", n)
	}
}
