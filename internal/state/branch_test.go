package state_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// TestBranchConcurrentWriters has 8 runs save 4 checkpoints each at once
// to one state branch over HTTP, each through its own Branch with its own
// local repository, as 8 CI jobs would: every checkpoint must reach the
// branch's history, and every run resume from its last. The writers save
// in rounds: all 8 start their save of iteration k together, once every
// save of iteration k-1 returned, so that each round is an 8-way race
// however fast or slow the machine (and a writer that just won cannot
// win every race after it).
func TestBranchConcurrentWriters(t *testing.T) {
	t.Parallel()
	const runs, saves = 8, 4
	srv := gitfake.Start(t, gitfake.Options{Tokens: []string{"s3cret"}})
	url, bare := srv.Repo(t, "state.git")
	rounds := make([]sync.WaitGroup, saves+1)
	for i := range rounds {
		rounds[i].Add(runs)
	}
	var wg sync.WaitGroup
	errs := make([]error, runs)
	for i := range runs {
		wg.Go(func() { errs[i] = saveRun(t, url, fmt.Sprintf("loop/run-%d", i), rounds) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d HTTP requests for %d checkpoints", srv.Requests(), runs*saves)

	perRun := map[string]int{}
	for line := range strings.Lines(gitfake.Git(t, "", "--git-dir="+bare, "log", "--format=%s", "loop-state")) {
		var id string
		var n int
		if _, err := fmt.Sscanf(line, "checkpoint %s iteration %d", &id, &n); err != nil {
			t.Fatalf("commit message %q: %v", line, err)
		}
		perRun[id]++
	}
	reader := openBranchHTTP(t, url, "s3cret", t.TempDir())
	for i := range runs {
		id := fmt.Sprintf("loop/run-%d", i)
		if perRun[id] != saves {
			t.Errorf("run %s has %d commits on the branch, want %d", id, perRun[id], saves)
		}
		cp, err := reader.Load(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Iteration != saves || cp.LedgerChunks != saves {
			t.Errorf("run %s resumes at iteration %d with %d ledger chunks, want %d and %d", id, cp.Iteration, cp.LedgerChunks, saves, saves)
		}
		chunks := gitfake.Git(t, "", "--git-dir="+bare, "ls-tree", "-r", "--name-only", "loop-state:runs/"+id+"/ledger")
		if n := strings.Count(chunks, "\n"); n != saves {
			t.Errorf("run %s has %d ledger chunks on the branch, want %d", id, n, saves)
		}
	}
	gitfake.Fsck(t, bare)
}

// saveRun saves iterations 1 to len(rounds)-1 of run id, changing a file
// of its loop root each time. Round 0 is the opening of its Branch; each
// round ends when every writer is done with it (rounds[k] counts them
// down), and the next save starts only then. A writer that fails still
// counts down the rounds left, so that the others go on.
func saveRun(t *testing.T, url, id string, rounds []sync.WaitGroup) error {
	next := 0
	done := func() {
		rounds[next].Done()
		rounds[next].Wait()
		next++
	}
	defer func() {
		for next < len(rounds) {
			rounds[next].Done()
			next++
		}
	}()
	root := t.TempDir()
	b, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: root, Branch: "loop-state", Remote: url, Token: "s3cret"})
	if err != nil {
		return err
	}
	defer b.Close()
	done()
	cp := newCheckpoint(id)
	for it := 1; it < len(rounds); it++ {
		if err := os.WriteFile(filepath.Join(root, "work.txt"), []byte(id+" "+strconv.Itoa(it)+"\n"), 0o644); err != nil {
			return err
		}
		cp.Iteration = it
		if err := b.Save(t.Context(), cp, commitFor(it)); err != nil {
			return err
		}
		done()
	}
	return nil
}

func openBranchHTTP(t testing.TB, url, token, root string) *state.Branch {
	t.Helper()
	b, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: root, Branch: "loop-state", Remote: url, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestBranchToken: a wrong or missing token fails with an error that says
// so and never holds the token, nor a password in the remote's URL.
func TestBranchToken(t *testing.T) {
	t.Parallel()
	srv := gitfake.Start(t, gitfake.Options{Tokens: []string{"right-token"}})
	url, _ := srv.Repo(t, "state.git")
	withPassword := strings.Replace(url, "http://", "http://x-access-token:wrong-password-987654@", 1)
	for _, tc := range []struct{ url, token, secret, want string }{
		{url, "wrong-token-0123456789", "wrong-token-0123456789", "the token was refused"},
		{url, "", "", "no token was given"},
		{withPassword, "", "wrong-password-987654", "the token was refused"},
	} {
		b := openBranchHTTP(t, tc.url, tc.token, t.TempDir())
		_, loadErr := b.Load(t.Context(), "a/b")
		saveErr := b.Save(t.Context(), newCheckpoint("a/b"), commitFor(1))
		for _, err := range []error{loadErr, saveErr} {
			switch {
			case err == nil:
				t.Fatalf("token %q: no error", tc.token)
			case tc.secret != "" && strings.Contains(err.Error(), tc.secret):
				t.Errorf("the error holds the secret: %v", err)
			case !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "authentication required"):
				t.Errorf("token %q: %v; want it to say %q", tc.token, err, tc.want)
			case !errors.Is(err, transport.ErrAuthenticationRequired):
				t.Errorf("token %q: %v does not match transport.ErrAuthenticationRequired", tc.token, err)
			}
		}
		t.Logf("%v", loadErr)
	}
	good := openBranchHTTP(t, url, "right-token", t.TempDir())
	if err := good.Save(t.Context(), newCheckpoint("a/b"), commitFor(1)); err != nil {
		t.Fatal(err)
	}
}

// TestBranchTwoWritersOfOneRun: a process that saves a run another process
// saved meanwhile (from another machine, so no lock kept them apart) is
// refused, not allowed to overwrite it.
func TestBranchTwoWritersOfOneRun(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	a := openBranch(t, bare, t.TempDir(), t.TempDir())
	b := openBranch(t, bare, t.TempDir(), t.TempDir())
	ctx := t.Context()
	cpA := newCheckpoint("pr/1")
	cpA.Iteration = 1
	if err := a.Save(ctx, cpA, commitFor(1)); err != nil {
		t.Fatal(err)
	}
	cpB, err := b.Load(ctx, "pr/1")
	if err != nil {
		t.Fatal(err)
	}
	cpB.Iteration = 2
	if err := b.Save(ctx, cpB, commitFor(2)); err != nil {
		t.Fatal(err)
	}
	// Another run moves the branch too; that alone would be retried.
	other := newCheckpoint("pr/2")
	if err := b.Save(ctx, other, commitFor(1)); err != nil {
		t.Fatal(err)
	}
	cpA.Iteration = 2
	before := *cpA
	err = a.Save(ctx, cpA, commitFor(2))
	if !errors.Is(err, state.ErrLocked) {
		t.Fatalf("second writer's Save: %v, want ErrLocked", err)
	}
	if diff := cmp.Diff(&before, cpA); diff != "" {
		t.Errorf("refused Save changed cp (-before +after):\n%s", diff)
	}
	got, err := openBranch(t, bare, t.TempDir(), t.TempDir()).Load(ctx, "pr/1")
	if err != nil || got.UpdatedAt != cpB.UpdatedAt {
		t.Errorf("the branch lost the first writer's checkpoint: %+v, %v", got, err)
	}
}

// TestBranchLayout checks what the branch holds and that a save sends a
// fixed number of objects however long the run.
func TestBranchLayout(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "src", "a.go"), "package a\n")
	b := openBranch(t, bare, root, t.TempDir())
	cp := newCheckpoint("loop/main")
	sent := map[int]int{}
	for n := 1; n <= 40; n++ {
		before := 0
		if n == 3 || n == 40 {
			before = looseObjects(t, bare)
		}
		cp.Iteration = n
		c := state.Commit{Ledger: fmt.Appendf(nil, "{\"n\":%04d}\n", n), Events: 1,
			Log: fmt.Appendf(nil, "n=%04d\n", n), Summary: fmt.Sprintf("%04d\n", n)}
		if err := b.Save(t.Context(), cp, c); err != nil {
			t.Fatal(err)
		}
		if n == 3 || n == 40 {
			sent[n] = looseObjects(t, bare) - before
		}
	}
	// commit, root, runs, loop, main, checkpoint.json; ledger, summaries and
	// log: three trees (the directory and two fan-out levels) and a blob
	// each. reviews.json and the workspace are unchanged.
	if sent[3] != 18 || sent[40] != sent[3] {
		t.Errorf("objects sent by save 3: %d, by save 40: %d; want 18 each", sent[3], sent[40])
	}
	files := gitfake.Git(t, "", "--git-dir="+bare, "ls-tree", "-r", "--name-only", "loop-state")
	want := []string{"runs/loop/main/checkpoint.json", "runs/loop/main/ledger/00/00/0000.jsonl", "runs/loop/main/ledger/00/00/0039.jsonl",
		"runs/loop/main/log/00/00/0000.log", "runs/loop/main/log/00/00/0039.log", "runs/loop/main/reviews.json",
		"runs/loop/main/summaries/00/00/0001.md", "runs/loop/main/summaries/00/00/0040.md", "runs/loop/main/workspace/src/a.go"}
	for _, w := range want {
		if !strings.Contains(files, w+"\n") {
			t.Errorf("the branch lacks %s", w)
		}
	}
	if n := strings.Count(files, "\n"); n != 3+3*40 {
		t.Errorf("the branch holds %d files, want %d:\n%s", n, 3+3*40, files)
	}
	roots := gitfake.Git(t, "", "--git-dir="+bare, "rev-list", "--max-parents=0", "loop-state")
	if strings.Count(roots, "\n") != 1 {
		t.Errorf("the branch has %d root commits, want 1 (an orphan branch)", strings.Count(roots, "\n"))
	}
	subject := strings.TrimSpace(gitfake.Git(t, "", "--git-dir="+bare, "log", "-1", "--format=%s|%an <%ae>", "loop-state"))
	if want := "checkpoint loop/main iteration 40 (running)|" + state.DefaultAuthor; subject != want {
		t.Errorf("last commit %q, want %q", subject, want)
	}
	gitfake.Fsck(t, bare)
}

// looseObjects counts the loose objects of a bare repository: a push of
// fewer than 100 objects (receive.unpackLimit) lands as loose objects.
func looseObjects(t *testing.T, bare string) int {
	t.Helper()
	for line := range strings.Lines(gitfake.Git(t, "", "--git-dir="+bare, "count-objects", "-v")) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "count: "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatal("git count-objects printed no count")
	return 0
}

// TestBranchLoadRejects: a damaged checkpoint on the branch is reported
// with its place on the branch, never as a missing one.
func TestBranchLoadRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(data []byte) []byte
		substr string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "loop-state:runs/a/b/checkpoint.json is corrupt: unexpected end of JSON input"},
		{"other run", replace(`"run_id": "a/b"`, `"run_id": "a/c"`), `loop-state:runs/a/b/checkpoint.json: checkpoint belongs to run "a/c"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bare := newBare(t, t.TempDir(), "state.git")
			b := openBranch(t, bare, t.TempDir(), t.TempDir())
			if err := b.Save(t.Context(), newCheckpoint("a/b"), commitFor(1)); err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(t.TempDir(), "work")
			gitfake.Git(t, "", "clone", "-q", "-b", "loop-state", bare, work)
			file := filepath.Join(work, "runs", "a", "b", "checkpoint.json")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, file, string(tt.edit(data)))
			gitfake.Git(t, work, "commit", "-q", "-am", "damage")
			gitfake.Git(t, work, "push", "-q", "origin", "loop-state")
			_, err = b.Load(t.Context(), "a/b")
			if err == nil || !strings.Contains(err.Error(), tt.substr) || errors.Is(err, state.ErrNotFound) {
				t.Errorf("Load = %v; want an error saying %q", err, tt.substr)
			}
		})
	}
}

// TestBranchFetchIsIncremental: once a Branch has seen the branch, a fetch
// brings what other writers added since, not the whole tree again (git
// sends the whole tree to a depth-limited fetch that cannot take a thin
// pack, which go-git cannot).
func TestBranchFetchIsIncremental(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	a := openBranch(t, bare, t.TempDir(), t.TempDir())
	cp := newCheckpoint("long/run")
	for n := 1; n <= 15; n++ {
		cp.Iteration = n
		if err := a.Save(t.Context(), cp, commitFor(n)); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	b := openBranch(t, bare, t.TempDir(), cache)
	if _, err := b.Load(t.Context(), "long/run"); err != nil {
		t.Fatal(err)
	}
	cold := packedObjects(t, cache)
	if err := a.Save(t.Context(), newCheckpoint("short/run"), commitFor(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Load(t.Context(), "short/run"); err != nil {
		t.Fatal(err)
	}
	// commit, root, runs, short, run, checkpoint.json, reviews.json, the
	// workspace (empty tree), and three trees (the directory and two
	// fan-out levels) and a blob each for ledger, log and summaries.
	if got := packedObjects(t, cache) - cold; got > 20 {
		t.Errorf("the second fetch brought %d objects (the first %d), want at most 20", got, cold)
	}
}

// packedObjects counts the objects in the packs of a repository.
func packedObjects(t *testing.T, gitDir string) int {
	t.Helper()
	for line := range strings.Lines(gitfake.Git(t, "", "--git-dir="+gitDir, "count-objects", "-v")) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "in-pack: "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatal("git count-objects printed no in-pack count")
	return 0
}

// TestBranchKeepWorkspace: a save outside a run (a review decision made
// in another checkout) keeps the workspace the run last stored.
func TestBranchKeepWorkspace(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	rootA, rootB, rootC := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(rootA, "work.txt"), "the builders' work\n")
	writeFile(t, filepath.Join(rootB, "other.txt"), "an unrelated checkout\n")
	cp := newCheckpoint("keep/it")
	if err := openBranch(t, bare, rootA, t.TempDir()).Save(t.Context(), cp, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	b := openBranch(t, bare, rootB, t.TempDir())
	got, err := b.Load(t.Context(), "keep/it")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Save(t.Context(), got, state.Commit{KeepWorkspace: true}); err != nil {
		t.Fatal(err)
	}
	c := openBranch(t, bare, rootC, t.TempDir())
	if _, err := c.Load(t.Context(), "keep/it"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Restore(t.Context(), "keep/it"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(rootC, "work.txt")); err != nil || string(b) != "the builders' work\n" {
		t.Errorf("after a save that keeps the workspace, the restored work.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(rootC, "other.txt")); err == nil {
		t.Error("the other checkout's file was stored as the run's workspace")
	}
}
