package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

// TestRecordDelivery: a run that stopped records where its work went, in a
// save that keeps every counter; a session on a run that has not stopped,
// or has no checkpoint, records nothing.
func TestRecordDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, never, map[string]Provider{"a": idle(1)})
	none, err := Open(ctx, h.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := none.RecordDelivery(ctx, state.Delivery{}); err == nil || !strings.Contains(err.Error(), "nothing to deliver") {
		t.Errorf("a run without a checkpoint recorded a delivery: %v", err)
	}
	none.Close()

	h.run(ctx) // iteration-cap after 2
	s, err := Open(ctx, h.opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Ran {
		t.Fatalf("the run is over: ran %t, %v", out.Ran, err)
	}
	d := state.Delivery{Kind: "partial", Mode: "push", Outcome: "pushed", Ref: "loop-partial/test/run", SHA: "d1", Base: "b0",
		Snapshot: s.Checkpoint().Snapshot, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := s.RecordDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cp, err := h.store.Load(ctx, h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&d, cp.Delivery); diff != "" {
		t.Errorf("stored delivery (-want +got):\n%s", diff)
	}
	if cp.Status != state.IterationCap || cp.Iteration != 2 {
		t.Errorf("the save changed the run: %s after %d", cp.Status, cp.Iteration)
	}

	cp.Status = state.Running
	if err := h.store.Save(ctx, cp, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	running, err := Open(ctx, h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	if err := running.RecordDelivery(ctx, d); err == nil || !strings.Contains(err.Error(), "only a run that stopped delivers") {
		t.Errorf("a running run recorded a delivery: %v", err)
	}
}
