package state_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
	"github.com/loop-action/loop-action/internal/workspace"
)

// saveRecorded saves iteration it of cp with a recording.
func saveRecorded(t *testing.T, s state.Store, cp *state.Checkpoint, it int) {
	t.Helper()
	cp.Iteration = it
	c := commitFor(it)
	c.Recording = &state.Recording{Iteration: it, Verdicts: []gate.Verdict{{Goal: "tests", Total: 1}}}
	if err := s.Save(t.Context(), cp, c); err != nil {
		t.Fatal(err)
	}
}

// On the branch, each iteration's recording keeps the workspace its save
// stored, readable from another machine's fresh cache; a new generation
// drops the old generation's recordings.
func TestBranchRecordings(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	root := t.TempDir()
	b := openBranch(t, "file://"+bare, root, t.TempDir())
	cp := newCheckpoint("replay/ci")
	for it, content := range []string{"echo 6\n", "echo 5\n"} {
		writeFile(t, filepath.Join(root, "calc.sh"), content)
		saveRecorded(t, b, cp, it)
	}

	other := openBranch(t, bare, t.TempDir(), t.TempDir())
	if _, err := other.Load(t.Context(), "replay/ci"); err != nil {
		t.Fatal(err)
	}
	recs, objs, err := other.Recordings(t.Context(), "replay/ci")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d recordings; want 2", len(recs))
	}
	scratch := t.TempDir()
	if _, err := workspace.Restore(t.Context(), scratch, objs, workspace.Snapshot(recs[0].Snapshot)); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(scratch, "calc.sh")); err != nil || string(data) != "echo 6\n" {
		t.Errorf("iteration 0's calc.sh = %q, %v; want what it was then", data, err)
	}

	fresh := newCheckpoint("replay/ci") // a new generation
	fresh.LedgerChunks, fresh.LedgerEvents, fresh.LogBytes = cp.LedgerChunks, cp.LedgerEvents, cp.LogBytes
	saveRecorded(t, b, fresh, 0)
	recs, _, err = b.Recordings(t.Context(), "replay/ci")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Iteration != 0 {
		t.Errorf("after a new generation: %d recordings; want only iteration 0", len(recs))
	}
	cmd := subprocess.ForTest(t, "git", "--git-dir="+bare, "cat-file", "-e", "loop-state:runs/replay/ci/snapshots/0001")
	cmd.Env = gitfake.Env(t.TempDir())
	if cmd.Run() == nil {
		t.Error("the old generation's snapshot of iteration 1 is still on the branch")
	}
}
