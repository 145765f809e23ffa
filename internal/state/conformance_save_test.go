package state_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

func TestStoreSaveFailureLeavesCheckpointUnchanged(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		ctx := t.Context()
		cp := newCheckpoint("nightly/main")
		cp.Iteration = 1
		if err := s.Save(ctx, cp, commitFor(1)); err != nil {
			t.Fatal(err)
		}
		before := *cp

		fix := f.breakSaves(t, cp.RunID)
		cp.Iteration = 2
		if err := s.Save(ctx, cp, commitFor(2)); err == nil {
			t.Fatal("Save succeeded while saves were broken")
		}
		cp.Iteration = 1
		if diff := cmp.Diff(&before, cp); diff != "" {
			t.Errorf("failed Save changed cp (-before +after):\n%s", diff)
		}
		loaded, err := f.elsewhere(t).Load(ctx, cp.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&before, loaded); diff != "" {
			t.Errorf("Load after failed Save (-want +got):\n%s", diff)
		}
		checkCommitted(t, s, cp.RunID, string(commitFor(1).Ledger), string(commitFor(1).Log))

		// The same save, retried once the obstacle is gone, commits.
		fix()
		cp.Iteration = 2
		if err := s.Save(ctx, cp, commitFor(2)); err != nil {
			t.Fatal(err)
		}
		checkCommitted(t, f.elsewhere(t), cp.RunID, string(commitFor(1).Ledger)+string(commitFor(2).Ledger),
			string(commitFor(1).Log)+string(commitFor(2).Log))
	})
}

// TestStoreRedoSave saves again from an earlier checkpoint, as a process
// that resumed from it would: the store then holds exactly what the new
// save says, and nothing of the saves it replaced.
func TestStoreRedoSave(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		ctx := t.Context()
		cp := newCheckpoint("redo/main")
		var at2 state.Checkpoint
		for n := 1; n <= 4; n++ {
			if n == 3 {
				at2 = *cp
			}
			cp.Iteration = n
			if err := s.Save(ctx, cp, commitFor(n)); err != nil {
				t.Fatal(err)
			}
		}
		redo := at2
		redo.Iteration = 3
		c := state.Commit{Ledger: []byte("{\"redo\":1}\n"), Events: 1, Log: []byte("redone\n"), Summary: "redone\n"}
		if err := s.Save(ctx, &redo, c); err != nil {
			t.Fatal(err)
		}
		r := f.elsewhere(t)
		checkCommitted(t, r, cp.RunID, string(commitFor(1).Ledger)+string(commitFor(2).Ledger)+"{\"redo\":1}\n",
			string(commitFor(1).Log)+string(commitFor(2).Log)+"redone\n")
		if got, err := r.Summary(ctx, cp.RunID, 3); err != nil || got != "redone\n" {
			t.Errorf("Summary(3) = %q, %v; want \"redone\\n\"", got, err)
		}
		if _, err := r.Summary(ctx, cp.RunID, 4); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Summary(4) after redoing iteration 3: %v, want ErrNotFound", err)
		}
		// Going back into the middle of a save's log cuts it there.
		back := redo
		back.LogBytes -= 3
		if err := s.Save(ctx, &back, state.Commit{Log: []byte("X\n")}); err != nil {
			t.Fatal(err)
		}
		checkCommitted(t, f.elsewhere(t), cp.RunID, string(commitFor(1).Ledger)+string(commitFor(2).Ledger)+"{\"redo\":1}\n",
			string(commitFor(1).Log)+string(commitFor(2).Log)+"redo"+"X\n")
	})
}

func TestStoreSaveRejects(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		tests := []struct {
			name string
			cp   *state.Checkpoint
			c    state.Commit
		}{
			{"invalid run id", newCheckpoint("../x"), state.Commit{}},
			{"ledger without newline", newCheckpoint("a/b"), state.Commit{Ledger: []byte(`{"n":1}`), Events: 1}},
			{"events without ledger", newCheckpoint("a/b"), state.Commit{Events: 2}},
			{"negative events", newCheckpoint("a/b"), state.Commit{Ledger: []byte("{}\n"), Events: -1}},
			{"log the store never had", &state.Checkpoint{RunID: "a/b", LogBytes: 5}, state.Commit{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before := *tt.cp
				if err := s.Save(t.Context(), tt.cp, tt.c); err == nil {
					t.Error("Save succeeded")
				}
				if diff := cmp.Diff(&before, tt.cp); diff != "" {
					t.Errorf("failed Save changed cp (-before +after):\n%s", diff)
				}
			})
		}
		if _, ok := f.committed(t, "runs/a/b/checkpoint.json"); ok {
			t.Error("a refused save committed a checkpoint")
		}
	})
}
