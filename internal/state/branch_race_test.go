package state_test

import (
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// TestBranchSaveOvertaken: a writer whose every push loses to another
// writer's checkpoint, more times than the backoff's 32 tries, still
// commits once the others let it, and nobody's checkpoint is lost. Before
// the losses to other writers' progress stopped counting as tries, the
// slower writer gave up after 32 attempts while the faster one went on
// committing (TestBranchConcurrentWriters under load). The other writer
// saves from inside the first one's save, just before each of its pushes,
// so the race is lost every time without depending on timing.
func TestBranchSaveOvertaken(t *testing.T) {
	t.Parallel()
	const overtakes = 33
	bare := newBare(t, t.TempDir(), "state.git")
	url := "file://" + bare
	slow := openBranch(t, url, t.TempDir(), t.TempDir())
	fast := openBranch(t, url, t.TempDir(), t.TempDir())
	fastCp := newCheckpoint("loop/fast")
	var fastErr error
	state.SetBeforePush(slow, func() {
		if fastCp.Iteration == overtakes || fastErr != nil {
			return
		}
		fastCp.Iteration++
		fastErr = fast.Save(t.Context(), fastCp, commitFor(fastCp.Iteration))
	})
	slowCp := newCheckpoint("loop/slow")
	slowCp.Iteration = 1
	if err := slow.Save(t.Context(), slowCp, commitFor(1)); err != nil {
		t.Fatalf("the overtaken save failed after %d checkpoints of the other writer: %v", fastCp.Iteration, err)
	}
	if fastErr != nil {
		t.Fatal(fastErr)
	}
	reader := openBranch(t, url, t.TempDir(), t.TempDir())
	for id, want := range map[string]int{"loop/slow": 1, "loop/fast": overtakes} {
		cp, err := reader.Load(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Iteration != want || cp.LedgerChunks != want {
			t.Errorf("run %s resumes at iteration %d with %d ledger chunks, want %d", id, cp.Iteration, cp.LedgerChunks, want)
		}
	}
	if n := strings.Count(gitfake.Git(t, "", "--git-dir="+bare, "log", "--format=%s", "loop-state"), "\n"); n != overtakes+1 {
		t.Errorf("%d commits on the branch, want %d", n, overtakes+1)
	}
	gitfake.Fsck(t, bare)
}
