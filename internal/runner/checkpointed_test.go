package runner

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

// TestCheckpointedSeesEachSavedCheckpoint: the hook is called once per
// checkpoint saved, in order, with the iteration, status and spend the
// store holds for it — the baseline, each iteration, and the stop.
func TestCheckpointedSeesEachSavedCheckpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t, never, map[string]Provider{"a": idle(10)})
	type seen struct {
		Iteration int
		Status    state.Status
		Tokens    int64
		Verdicts  int
	}
	var got []seen
	h.opts.Checkpointed = func(cp *state.Checkpoint) {
		saved, err := h.store.Load(context.Background(), cp.RunID)
		if err != nil || saved.Iteration != cp.Iteration || saved.Spend.Tokens != cp.Spend.Tokens {
			t.Errorf("hook at iteration %d before the store holds it (store: %+v, %v)", cp.Iteration, saved, err)
		}
		got = append(got, seen{cp.Iteration, cp.Status, cp.Spend.Tokens, len(cp.Verdicts)})
	}
	h.run(context.Background())
	want := []seen{
		{0, state.Running, 0, 1},
		{1, state.Running, 10, 1},
		{2, state.IterationCap, 20, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checkpoints seen (-want +got):\n%s", diff)
	}
}
