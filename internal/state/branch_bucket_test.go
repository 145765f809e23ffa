package state_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// lightCommit is the commit of iteration n: one event, a log line, a
// summary (commitFor's ledger chunks grow with n: a long run of them
// takes long to pack).
func lightCommit(n int) state.Commit {
	return state.Commit{
		Ledger:  fmt.Appendf(nil, "{\"iteration\":%d}\n", n),
		Events:  1,
		Log:     fmt.Appendf(nil, "iteration %d done\n", n),
		Summary: fmt.Sprintf("# Iteration %d\n\nall good\n", n),
	}
}

// committedUpTo is the ledger and log a run of lightCommit(1) to lightCommit(n) commits.
func committedUpTo(n int) (ledger, log string) {
	var l, g strings.Builder
	for i := 1; i <= n; i++ {
		c := lightCommit(i)
		l.Write(c.Ledger)
		g.Write(c.Log)
	}
	return l.String(), g.String()
}

// seedRun commits run id, n iterations of lightCommit long, as n saves
// would leave it (see state.SeedRun).
func seedRun(t *testing.T, b *state.Branch, id string, n int) *state.Checkpoint {
	t.Helper()
	cp := newCheckpoint(id)
	if err := state.SeedRun(t.Context(), b, cp, n, lightCommit); err != nil {
		t.Fatal(err)
	}
	return cp
}

// checkRun checks that run id reads as n iterations of lightCommit: its
// ledger, log and summaries (those across the first buckets' edges and
// the last), and no summary past n.
func checkRun(t *testing.T, b *state.Branch, id string, n int) {
	t.Helper()
	ledger, log := committedUpTo(n)
	checkCommitted(t, b, id, ledger, log)
	for _, i := range []int{1, 99, 100, 101, 150, 199, 200, 201, n - 1, n} {
		if i < 1 || i > n {
			continue
		}
		if got, err := b.Summary(t.Context(), id, i); err != nil || got != lightCommit(i).Summary {
			t.Errorf("Summary(%d) at iteration %d = %q, %v; want %q", i, n, got, err, lightCommit(i).Summary)
		}
	}
	if _, err := b.Summary(t.Context(), id, n+1); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Summary(%d) at iteration %d: %v, want ErrNotFound", n+1, n, err)
	}
}

// branchFiles lists the files (and, with trees, the trees) under path
// at the head of the branch loop-state of bare.
func branchFiles(t *testing.T, bare, path string, trees bool) []string {
	t.Helper()
	args := []string{"--git-dir=" + bare, "ls-tree", "-r", "--name-only", "loop-state:" + path}
	if trees {
		args = append(args[:3], append([]string{"-t"}, args[3:]...)...)
	}
	return strings.Fields(gitfake.Git(t, "", args...))
}

// checkConsolidated fails the test unless run id's tree holds each
// consolidated hundred of want ("ledger/00/00.jsonl").
func checkConsolidated(t *testing.T, bare, id string, want ...string) {
	t.Helper()
	fs := branchFiles(t, bare, "runs/"+id, false)
	for _, w := range want {
		if !slices.Contains(fs, w) {
			t.Errorf("runs/%s/%s is missing", id, w)
		}
	}
}

// saveNext saves the run's next iteration, lightCommit(cp.Iteration+1).
func saveNext(t *testing.T, b *state.Branch, cp *state.Checkpoint) {
	t.Helper()
	cp.Iteration++
	if err := b.Save(t.Context(), cp, lightCommit(cp.Iteration)); err != nil {
		t.Fatalf("save of iteration %d: %v", cp.Iteration, err)
	}
}

// TestBranchConsolidates saves a run across the edge of its second
// hundred: each save after the run moved past a hundred replaces that
// hundred's files of the ledger, the summaries and the log by one blob,
// and the run reads the same before and after, here and on another
// machine.
func TestBranchConsolidates(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	b := openBranch(t, bare, t.TempDir(), t.TempDir())
	cp := seedRun(t, b, "loop/main", 197)
	for n := 198; n <= 203; n++ {
		saveNext(t, b, cp)
		checkRun(t, b, "loop/main", n)
		checkRun(t, openBranch(t, bare, t.TempDir(), t.TempDir()), "loop/main", n)
	}
	// Summary 200 is the first of the third hundred (consolidated at
	// iteration 200); chunk 200 of the ledger and the log is iteration 201's.
	want := []string{
		"ledger/00/00.jsonl", "ledger/00/01.jsonl", "ledger/00/02/0200.jsonl", "ledger/00/02/0201.jsonl", "ledger/00/02/0202.jsonl",
		"log/00/00.log", "log/00/01.log", "log/00/02/0200.log", "log/00/02/0201.log", "log/00/02/0202.log",
		"summaries/00/00.md", "summaries/00/01.md", "summaries/00/02/0200.md", "summaries/00/02/0201.md", "summaries/00/02/0202.md",
		"summaries/00/02/0203.md",
	}
	var got []string
	for _, f := range branchFiles(t, bare, "runs/loop/main", false) {
		if !strings.HasPrefix(f, "workspace/") && strings.Contains(f, "/") {
			got = append(got, f)
		}
	}
	slices.Sort(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the run's files at iteration 203 (-want +got):\n%s", d)
	}
	gitfake.Fsck(t, bare)
}

// TestBranchTreeStaysSmall: the head's tree of a run 500 iterations long
// holds a few entries per hundred iterations, not one per file (git's
// receive-pack walks all of them at every push): about 230, where one
// entry per ledger chunk, log chunk and summary would be over 1,500. Each
// hundred more adds three (one blob each); a run of 2,000 holds about 290.
func TestBranchTreeStaysSmall(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	b := openBranch(t, bare, t.TempDir(), t.TempDir())
	cp := seedRun(t, b, "loop/main", 498)
	saveNext(t, b, cp)
	saveNext(t, b, cp)
	if n := len(branchFiles(t, bare, "runs/loop/main", true)); n >= 300 {
		t.Errorf("the run's tree at iteration 500 holds %d entries, want fewer than 300", n)
	}
	checkRun(t, openBranch(t, bare, t.TempDir(), t.TempDir()), "loop/main", 500)
}

// back returns the checkpoint of iteration k of a run of lightCommit, as a
// resume from it would hold, with the log cut short by cut bytes.
func back(cp state.Checkpoint, k, cut int) *state.Checkpoint {
	ledger, log := committedUpTo(k)
	cp.Iteration, cp.LedgerChunks, cp.LogBytes = k, k, int64(len(log)-cut)
	cp.LedgerEvents = strings.Count(ledger, "\n")
	return &cp
}

// TestBranchGoesBackIntoConsolidated saves a run 230 iterations long from
// older checkpoints, on another machine whose local repository holds only
// the head's objects (the consolidated blobs, not the files they were made
// of): a drop that ends inside a consolidated hundred expands it back, and
// the run reads as the checkpoint saved from plus the new save, then goes
// on and consolidates again. The run is seeded once; each case saves into
// a copy of its remote.
func TestBranchGoesBackIntoConsolidated(t *testing.T) {
	t.Parallel()
	seeded := newBare(t, t.TempDir(), "state.git")
	seedRun(t, openBranch(t, seeded, t.TempDir(), t.TempDir()), "loop/main", 230)
	checkConsolidated(t, seeded, "loop/main", "ledger/00/00.jsonl", "ledger/00/01.jsonl", "log/00/01.log", "summaries/00/01.md")
	if t.Failed() {
		t.FailNow() // the drops would not end inside a consolidated hundred
	}
	for _, tc := range []struct {
		name   string
		k, cut int // the checkpoint's iteration; bytes its log lacks of iteration k's
	}{
		{"inside the second hundred", 150, 0},
		{"at the end of a hundred", 100, 0},
		{"at the start of a hundred", 101, 0},
		{"the last of a hundred", 199, 0},
		{"inside the first hundred", 42, 0},
		{"to the first iteration", 1, 0},
		{"log ending inside a chunk", 150, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bare := filepath.Join(t.TempDir(), "state.git")
			if err := os.CopyFS(bare, os.DirFS(seeded)); err != nil {
				t.Fatal(err)
			}
			b := openBranch(t, bare, t.TempDir(), t.TempDir())
			head, err := b.Load(t.Context(), "loop/main")
			if err != nil {
				t.Fatal(err)
			}
			cp := back(*head, tc.k, tc.cut)
			saveNext(t, b, cp)
			ledger, log := committedUpTo(tc.k)
			next := lightCommit(tc.k + 1)
			checkCommitted(t, b, "loop/main", ledger+string(next.Ledger), log[:len(log)-tc.cut]+string(next.Log))
			if tc.cut > 0 {
				return
			}
			checkRun(t, b, "loop/main", tc.k+1)
			// The saves up to iteration 201 (seeded), then real ones.
			if err := state.SeedRun(t.Context(), b, cp, max(tc.k+1, 201), lightCommit); err != nil {
				t.Fatal(err)
			}
			saveNext(t, b, cp)
			checkRun(t, openBranch(t, bare, t.TempDir(), t.TempDir()), "loop/main", cp.Iteration)
			checkConsolidated(t, bare, "loop/main", "ledger/00/01.jsonl") // again
			gitfake.Fsck(t, bare)
		})
	}
}

// TestBranchResumesMidConsolidation: a save after those that consolidate
// a hundred is interrupted before its push (the process died): the next
// process on the machine reads the run whole, and its saves consolidate.
func TestBranchResumesMidConsolidation(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	root, cache := t.TempDir(), t.TempDir()
	dead := openBranch(t, bare, root, cache)
	cp := seedRun(t, dead, "loop/main", 99)
	saveNext(t, dead, cp) // iteration 100: the summaries' first hundred is consolidated
	saveNext(t, dead, cp) // 101: the ledger's and the log's
	ctx, cancel := context.WithCancel(t.Context())
	state.SetBeforePush(dead, cancel)
	unpushed := *cp
	unpushed.Iteration++
	if err := dead.Save(ctx, &unpushed, lightCommit(unpushed.Iteration)); err == nil {
		t.Fatal("the save cancelled before its push succeeded")
	}

	next := openBranch(t, bare, root, cache) // the dead one is never closed
	got, err := next.Load(t.Context(), "loop/main")
	if err != nil || got.Iteration != 101 {
		t.Fatalf("Load after the crash = %+v, %v; want iteration 101", got, err)
	}
	checkRun(t, next, "loop/main", 101)
	for got.Iteration < 103 {
		saveNext(t, next, got)
	}
	checkRun(t, next, "loop/main", 103)
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	checkRun(t, openBranch(t, bare, t.TempDir(), cache), "loop/main", 103)
	checkConsolidated(t, bare, "loop/main", "ledger/00/00.jsonl", "log/00/00.log", "summaries/00/00.md")
	checkWhole(t, cache)
	gitfake.Fsck(t, bare)
}

// TestBranchConsolidatesOvertaken: a save that consolidates a hundred of
// its run, overtaken by another writer whose saves consolidate a hundred
// of theirs, rebuilds its files on the other's head; both runs read whole.
func TestBranchConsolidatesOvertaken(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	slow := openBranch(t, bare, t.TempDir(), t.TempDir())
	fast := openBranch(t, bare, t.TempDir(), t.TempDir())
	slowCp := seedRun(t, slow, "loop/slow", 100)
	fastCp := seedRun(t, fast, "loop/fast", 99)
	var fastErr error
	state.SetBeforePush(slow, func() {
		if fastCp.Iteration < 103 && fastErr == nil {
			fastCp.Iteration++
			fastErr = fast.Save(t.Context(), fastCp, lightCommit(fastCp.Iteration))
		}
	})
	saveNext(t, slow, slowCp) // iteration 101: the ledger's and the log's first hundred
	if fastErr != nil {
		t.Fatal(fastErr)
	}
	reader := openBranch(t, bare, t.TempDir(), t.TempDir())
	checkRun(t, reader, "loop/slow", 101)
	checkRun(t, reader, "loop/fast", 103)
	for _, id := range []string{"loop/slow", "loop/fast"} {
		checkConsolidated(t, bare, id, "ledger/00/00.jsonl", "log/00/00.log", "summaries/00/00.md")
	}
	gitfake.Fsck(t, bare)
}

// TestBranchConsolidatedCollected: a collection of the local repository
// keeps the consolidated blobs (and drops the files they replaced): the
// run reads whole after it, and a save from an older checkpoint expands
// a hundred from the blob alone.
func TestBranchConsolidatedCollected(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	root, cache := t.TempDir(), t.TempDir()
	b := openBranch(t, bare, root, cache)
	cp := seedRun(t, b, "loop/main", 205)
	if err := state.CollectCache(b); err != nil {
		t.Fatal(err)
	}
	if loose, packs := cacheObjects(t, cache); loose != 0 || packs != 1 {
		t.Fatalf("the collected cache holds %d loose objects and %d packs, want one pack", loose, packs)
	}
	for _, i := range []int{150, 199} { // chunks of the ledger's second hundred, consolidated
		blob := plumbing.ComputeHash(plumbing.BlobObject, lightCommit(i+1).Ledger)
		if subprocess.ForTest(t, "git", "--git-dir="+cache, "cat-file", "-e", blob.String()).Run() == nil {
			t.Fatalf("the collected cache holds ledger chunk %d: the test proves nothing", i)
		}
	}
	checkRun(t, b, "loop/main", 205)
	cp = back(*cp, 150, 0)
	saveNext(t, b, cp)
	checkRun(t, b, "loop/main", 151)
	gitfake.Fsck(t, bare)
}

// checkWhole fails the test unless every commit and tree in the repository
// at gitDir names only objects it holds (git fsck checks only what its
// refs reach, and a local state repository has none).
func checkWhole(t *testing.T, gitDir string) {
	t.Helper()
	var roots []string
	for line := range strings.Lines(gitfake.Git(t, "", "--git-dir="+gitDir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")) {
		id, kind, _ := strings.Cut(strings.TrimSpace(line), " ")
		if kind == "commit" || kind == "tree" {
			roots = append(roots, id)
		}
	}
	cmd := subprocess.ForTest(t, "git", "--git-dir="+gitDir, "rev-list", "--objects", "--no-walk", "--missing=print", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(roots, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git rev-list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "?") {
			t.Errorf("the local repository lacks %s, named by an object it holds", strings.TrimSpace(line[1:]))
		}
	}
}
