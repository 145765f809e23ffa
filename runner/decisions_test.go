package runner

import (
	"context"
	"testing"

	"github.com/loop-action/loop-action/state"
)

func TestANewGenerationKeepsTheLastCommentHandled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, never, map[string]Provider{"a": idle(10)})
	h.run(context.Background())
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	cp.LastCommentID = 3_000_000_123
	if err := h.store.Save(context.Background(), cp, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	h.opts.Generation = "the head moved"
	h.run(context.Background())
	if cp, err = h.store.Load(context.Background(), h.opts.RunID); err != nil || cp.LastCommentID != 3_000_000_123 {
		t.Errorf("the new generation's last comment handled: %v (%v), want 3000000123", cp.LastCommentID, err)
	}
}
