package runner

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// session opens a session on the harness's run, lets amend change it, runs
// it and closes it.
func (h *harness) session(ctx context.Context, amend func(*Session)) Outcome {
	h.t.Helper()
	s, err := Open(ctx, h.opts)
	if err != nil {
		h.t.Fatalf("Open: %v", err)
	}
	amend(s)
	out, err := s.Run(ctx)
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	if err := s.Close(); err != nil {
		h.t.Fatalf("Close: %v", err)
	}
	return out
}

// countingStore counts what a session asks of the store.
type countingStore struct {
	*state.Dir
	loads, locks, saves atomic.Int32
}

func (c *countingStore) Load(ctx context.Context, id string) (*state.Checkpoint, error) {
	c.loads.Add(1)
	return c.Dir.Load(ctx, id)
}

func (c *countingStore) Lock(id string) (func() error, error) {
	c.locks.Add(1)
	return c.Dir.Lock(id)
}

func (c *countingStore) Save(ctx context.Context, cp *state.Checkpoint, cm state.Commit) error {
	c.saves.Add(1)
	return c.Dir.Save(ctx, cp, cm)
}

// TestSessionLoadsOnce: a session that amends a paused run (a decision and
// the last comment handled), commits and then runs it takes the lock once
// and loads the checkpoint once; while it is open the run is refused to
// anyone else, and the run goes on from the amended checkpoint.
func TestSessionLoadsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, reviewed, map[string]Provider{"a": touch("page.html", 10)})
	if out := h.run(context.Background()); out.Status != state.AwaitingReview {
		t.Fatalf("first run: %s", out.Status)
	}
	cs := &countingStore{Dir: h.store}
	h.opts.Store = cs
	s, err := Open(context.Background(), h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := h.opts
	other.Store = h.store
	if _, err := Open(context.Background(), other); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), `run "test/run" is in use by another loop-action process`) {
		t.Errorf("a second session on the run: %v, want ErrInUse", err)
	}
	dec, err := s.Decide(Review{Approve: true, By: "alice", Comment: 7})
	if err != nil {
		t.Fatal(err)
	}
	s.HandledComment(7)
	if err := s.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(context.Background())
	if err != nil || !out.Success {
		t.Fatalf("run after the approval: %v, %s", err, out.Status)
	}
	want := gate.Decision{Goal: "ui", Approved: true, By: "alice", Snapshot: s.Checkpoint().Snapshot, Comment: 7}
	if diff := cmp.Diff(want, dec); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	if got := [2]int32{cs.locks.Load(), cs.loads.Load()}; got != [2]int32{1, 1} {
		t.Errorf("locks and loads: %v, want one of each", got)
	}
	if s.Checkpoint().LastCommentID != 7 || s.Checkpoint().Status != state.Success {
		t.Errorf("the session reports %s with last comment %d", s.Checkpoint().Status, s.Checkpoint().LastCommentID)
	}
	if _, err := s.Run(context.Background()); err == nil {
		t.Error("a session ran its run twice")
	}

}

// TestSessionReleasesTheRun: Close lets the next process take the run, and
// a failed Open holds nothing.
func TestSessionReleasesTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, reviewed, map[string]Provider{"a": idle(1)})
	h.opts.VerifyDecisions = func(context.Context, []gate.Decision) ([]gate.Decision, []DroppedDecision, error) {
		return nil, nil, errors.New("the API is down")
	}
	cp := &state.Checkpoint{Version: state.Version, RunID: h.opts.RunID, Status: state.AwaitingReview,
		Decisions: []gate.Decision{{Goal: "ui", Approved: true, By: "x", Snapshot: "abc"}}}
	if err := h.store.Save(context.Background(), cp, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), h.opts); err == nil || !strings.Contains(err.Error(), "the API is down") {
		t.Fatalf("Open = %v, want the verifier's error", err)
	}
	h.opts.VerifyDecisions = nil
	s, err := Open(context.Background(), h.opts)
	if err != nil {
		t.Fatalf("Open after a failed Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(context.Background(), h.opts)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s.Close()
}

const twoReviews = `name = "two"
[stop]
max_iterations = 2
[providers.a]
command = ["a"]
[[node]]
name = "fixer"
provider = "a"
goals = ["ui", "copy"]
[[goal]]
name = "ui"
  [[goal.check]]
  type = "manual"
[[goal]]
name = "copy"
  [[goal.check]]
  type = "manual"
[[goal]]
name = "tests"
  [[goal.check]]
  type = "file_exists"
  path = "missing.txt"
  [[goal.check]]
  type = "manual"
`

// TestDecideNeedsAPendingReview is the one review rule of both faces: a
// decision names a goal with a review pending, or there is only one; it
// binds to the snapshot under review; a rejection has a reason.
func TestDecideNeedsAPendingReview(t *testing.T) {
	t.Parallel()
	h := newHarness(t, twoReviews, map[string]Provider{"a": idle(1)})
	h.run(context.Background())
	tests := []struct {
		name    string
		review  Review
		want    string // the goal decided
		wantErr string
	}{
		{"named", Review{Goal: "copy", Approve: true, By: "a"}, "copy", ""},
		{"two pending", Review{Approve: true, By: "a"}, "", `reviews of goals "ui", "copy" are pending: name the goal`},
		{"not pending", Review{Goal: "tests", Approve: true, By: "a"}, "", `no review of goal "tests" is pending; reviews of goals "ui", "copy" are pending`},
		{"unknown", Review{Goal: "nope", Approve: true, By: "a"}, "", `no review of goal "nope" is pending`},
		{"rejection without reason", Review{Goal: "ui", By: "a"}, "", "a rejection needs a reason"},
		{"nobody", Review{Goal: "ui", Approve: true}, "", "a decision needs who made it"},
		{"rejection", Review{Goal: "ui", By: "a", Reason: "too pale"}, "ui", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), h.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close() // never committed: each case starts from the paused run
			dec, err := s.Decide(tt.review)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Decide = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dec.Goal != tt.want || dec.Snapshot != s.Checkpoint().Snapshot || dec.Snapshot == "" {
				t.Errorf("decided goal %q for snapshot %q, want %q for %q", dec.Goal, dec.Snapshot, tt.want, s.Checkpoint().Snapshot)
			}
		})
	}
}

// TestAmendmentsWithoutARun: a session that only amends (the action's
// /loop stop) commits the stop and the decisions the verifier dropped, and
// says nothing of a run that never happened.
func TestAmendmentsWithoutARun(t *testing.T) {
	t.Parallel()
	h, d := pausedWithDecision(t)
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	cp.Status = state.Running // as a run killed mid-iteration leaves it
	if err := h.store.Save(context.Background(), cp, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	h.opts.VerifyDecisions = func(_ context.Context, ds []gate.Decision) ([]gate.Decision, []DroppedDecision, error) {
		return nil, []DroppedDecision{{Decision: ds[0], Why: "forged"}}, nil
	}
	s, err := Open(context.Background(), h.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop("stopped by @writer with /loop stop"); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop("again"); err == nil || !strings.Contains(err.Error(), "the run is already over (cancelled)") {
		t.Errorf("a second stop: %v", err)
	}
	s.Close()
	cp, err = h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Status != state.Cancelled || len(cp.Decisions) != 0 {
		t.Errorf("checkpoint: %s with decisions %+v, want cancelled without %+v", cp.Status, cp.Decisions, d)
	}
	var types []ledger.Type
	for _, e := range h.events() {
		types = append(types, e.Type)
	}
	tail := types[len(types)-2:]
	if diff := cmp.Diff([]ledger.Type{ledger.ReviewDropped, ledger.StopTriggered}, tail); diff != "" {
		t.Errorf("the last events (-want +got):\n%s", diff)
	}
	if out := OutcomeOf(cp); out.Ran || out.Status != state.Cancelled || out.RunID != h.opts.RunID {
		t.Errorf("OutcomeOf: %+v", out)
	}
}

// TestNoAmendmentAfterRun: once a session has run, its run saves its own
// checkpoints; a decision then is refused, even on a review the run has
// just asked for.
func TestNoAmendmentAfterRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, reviewed, map[string]Provider{"a": touch("page.html", 10)})
	s, err := Open(context.Background(), h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out, err := s.Run(context.Background()); err != nil || out.Status != state.AwaitingReview {
		t.Fatalf("run: %v, %s", err, out.Status)
	}
	if _, err := s.Decide(Review{Approve: true, By: "alice"}); err == nil || !strings.Contains(err.Error(), "amend it before running it") {
		t.Errorf("a decision after the run: %v", err)
	}
	if err := s.Stop("late"); err == nil {
		t.Error("a stop after the run was taken")
	}
}
