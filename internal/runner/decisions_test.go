package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

const reviewed = `name = "reviewed"
[stop]
max_iterations = 3
[providers.a]
command = ["a"]
[[node]]
name = "fixer"
provider = "a"
goals = ["ui"]
[[goal]]
name = "ui"
  [[goal.check]]
  type = "file_exists"
  path = "page.html"
  [[goal.check]]
  type = "manual"
`

// pausedWithDecision runs until the review pause, then writes an approval
// of the snapshot under review into the checkpoint, as anyone able to
// write to the store could.
func pausedWithDecision(t *testing.T) (*harness, gate.Decision) {
	t.Helper()
	h := newHarness(t, reviewed, map[string]Provider{"a": touch("page.html", 10)})
	if out := h.run(context.Background()); out.Status != state.AwaitingReview {
		t.Fatalf("first run: %s", out.Status)
	}
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	d := gate.Decision{Goal: "ui", Approved: true, By: "mallory", Snapshot: cp.Snapshot, Comment: 42}
	cp.Decisions = append(cp.Decisions, d)
	if err := h.store.Save(context.Background(), cp, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	return h, d
}

func TestVerifyDecisionsDropsWhatDoesNotHold(t *testing.T) {
	t.Parallel()
	h, d := pausedWithDecision(t)
	var seen []gate.Decision
	h.opts.VerifyDecisions = func(_ context.Context, ds []gate.Decision) ([]gate.Decision, []DroppedDecision, error) {
		seen = ds
		return nil, []DroppedDecision{{Decision: ds[0], Why: "comment 42 is not on pull request #7"}}, nil
	}
	if out := h.run(context.Background()); out.Success || out.Status != state.AwaitingReview {
		t.Fatalf("a dropped approval: %s", out.Status)
	}
	if diff := cmp.Diff([]gate.Decision{d}, seen); diff != "" {
		t.Errorf("the hook saw (-want +got):\n%s", diff)
	}
	var dropped []string
	for _, e := range h.events() {
		if e.Type == ledger.ReviewDropped {
			dropped = append(dropped, e.Line())
		}
	}
	want := `review_dropped approval of goal "ui" by "mallory" for snapshot "` + d.Snapshot[:7] + `" dropped: comment 42 is not on pull request #7`
	if diff := cmp.Diff([]string{want}, dropped); diff != "" {
		t.Errorf("review_dropped events (-want +got):\n%s", diff)
	}
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Decisions) != 0 {
		t.Errorf("the checkpoint keeps %+v", cp.Decisions)
	}
}

func TestVerifyDecisionsErrorLosesNothing(t *testing.T) {
	t.Parallel()
	h, d := pausedWithDecision(t)
	h.opts.VerifyDecisions = func(context.Context, []gate.Decision) ([]gate.Decision, []DroppedDecision, error) {
		return nil, nil, errors.New("the API is down")
	}
	if _, err := Run(context.Background(), h.opts); err == nil || !strings.Contains(err.Error(), "the API is down") {
		t.Fatalf("Run = %v, want the hook's error", err)
	}
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]gate.Decision{d}, cp.Decisions); diff != "" || cp.Status != state.AwaitingReview {
		t.Errorf("checkpoint after a failed check: %s, decisions (-want +got):\n%s", cp.Status, diff)
	}
	h.opts.VerifyDecisions = nil // the CLI: the store is trusted
	if out := h.run(context.Background()); !out.Success {
		t.Errorf("without a hook the stored approval counts: %s", out.Status)
	}
}

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
	h.session(context.Background(), func(s *Session) { s.NewGeneration("the head moved") })
	if cp, err = h.store.Load(context.Background(), h.opts.RunID); err != nil || cp.LastCommentID != 3_000_000_123 {
		t.Errorf("the new generation's last comment handled: %v (%v), want 3000000123", cp.LastCommentID, err)
	}
}
