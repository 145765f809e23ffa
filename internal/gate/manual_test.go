package gate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManualRulings(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, fixture)
	const snap, old = "abcdef0123456789abcdef0123456789abcdef01", "1111111222222233333334444444555555566666"
	passing := map[CheckID]CommandResult{{Goal: "reviewed"}: {Command: "true"}}
	failing := map[CheckID]CommandResult{{Goal: "reviewed"}: {Command: "true", ExitCode: 1}}
	tests := []struct {
		name      string
		ev        Evidence
		status    Status
		requested bool
		line      string
	}{
		{"not requested while the goal fails", Evidence{Commands: failing, Snapshot: snap}, Pending, false,
			"review not requested yet: the goal's other checks must pass first"},
		{"awaiting", Evidence{Commands: passing, Snapshot: snap}, Pending, true,
			"awaiting review of snapshot abcdef0: Ship it?"},
		{"approved for this snapshot", Evidence{Commands: passing, Snapshot: snap,
			Decisions: []Decision{{Goal: "reviewed", Approved: true, By: "alice", Snapshot: snap}}}, Pass, false,
			"approved by alice for snapshot abcdef0"},
		{"rejected for this snapshot", Evidence{Commands: passing, Snapshot: snap,
			Decisions: []Decision{{Goal: "reviewed", By: "bob", Reason: "colours are off", Snapshot: snap}}}, Fail, false,
			"rejected by bob for snapshot abcdef0: colours are off"},
		{"the latest decision wins", Evidence{Commands: passing, Snapshot: snap, Decisions: []Decision{
			{Goal: "reviewed", By: "bob", Snapshot: snap},
			{Goal: "reviewed", Approved: true, By: "alice", Snapshot: snap}}}, Pass, false,
			"approved by alice for snapshot abcdef0"},
		{"an approval of an older snapshot re-opens the review", Evidence{Commands: passing, Snapshot: snap,
			Decisions: []Decision{{Goal: "reviewed", Approved: true, By: "alice", Snapshot: old}}}, Pending, true,
			"review re-opened: the approval by alice was for snapshot 1111111, the workspace is now abcdef0: Ship it?"},
		{"another goal's approval does not count", Evidence{Commands: passing, Snapshot: snap,
			Decisions: []Decision{{Goal: "tests", Approved: true, By: "alice", Snapshot: snap}}}, Pending, true,
			"awaiting review of snapshot abcdef0: Ship it?"},
		{"no snapshot fails closed", Evidence{Commands: passing}, Fail, false,
			"the workspace snapshot could not be taken, so no review can be bound to it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got CheckVerdict
			for _, v := range Evaluate(cfg, tt.ev) {
				if v.Goal == "reviewed" {
					got = v.Checks[1]
				}
			}
			want := CheckVerdict{Index: 1, Type: "manual", Status: tt.status, Evidence: tt.line, ReviewRequested: tt.requested}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ruling (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAwaitingReview(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, `
name = "x"
[stop]
max_tokens = 10
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "true"
[[goal]]
name = "ui"
  [[goal.check]]
  type = "test"
  run = "true"
  [[goal.check]]
  type = "manual"
`)
	const snap = "abcdef0123456789abcdef0123456789abcdef01"
	ev := func(testsExit, uiExit int, d ...Decision) Evidence {
		return Evidence{Snapshot: snap, Decisions: d, Commands: map[CheckID]CommandResult{
			{Goal: "tests"}: {Command: "true", ExitCode: testsExit},
			{Goal: "ui"}:    {Command: "true", ExitCode: uiExit},
		}}
	}
	tests := []struct {
		name             string
		ev               Evidence
		success, waiting bool
	}{
		{"only the review is left", ev(0, 0), false, true},
		{"another goal still fails", ev(1, 0), false, false},
		{"the goal's own check fails: no review yet", ev(0, 1), false, false},
		{"approved", ev(0, 0, Decision{Goal: "ui", Approved: true, By: "a", Snapshot: snap}), true, false},
		{"rejected", ev(0, 0, Decision{Goal: "ui", By: "a", Snapshot: snap}), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Evaluate(cfg, tt.ev)
			if got := OverallSuccess(cfg, v); got != tt.success {
				t.Errorf("OverallSuccess = %v, want %v", got, tt.success)
			}
			if got := AwaitingReview(cfg, v); got != tt.waiting {
				t.Errorf("AwaitingReview = %v, want %v", got, tt.waiting)
			}
		})
	}
}

func TestSignature(t *testing.T) {
	t.Parallel()
	a := []Verdict{{Goal: "b", Passed: 1, Total: 2}, {Goal: "a", Satisfied: true, Passed: 1, Total: 1}}
	b := []Verdict{a[1], a[0]}
	if Signature(a) != Signature(b) {
		t.Errorf("signature depends on order: %q vs %q", Signature(a), Signature(b))
	}
	if want := "a:true:1/1,b:false:1/2"; Signature(a) != want {
		t.Errorf("Signature = %q, want %q", Signature(a), want)
	}
	c := []Verdict{{Goal: "b", Passed: 2, Total: 2, Satisfied: true}, a[1]}
	if Signature(a) == Signature(c) {
		t.Error("progress did not change the signature")
	}
}
