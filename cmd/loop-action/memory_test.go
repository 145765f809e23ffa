package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		xs       []int
		p        float64
		want     int
		wantNone bool
	}{
		{nil, 0.5, 0, true},
		{[]int{4}, 0.5, 4, false},
		{[]int{4}, 0.9, 4, false},
		{[]int{3, 1}, 0.5, 1, false}, // nearest rank: the lower of two
		{[]int{3, 1}, 0.9, 3, false},
		{[]int{5, 1, 4, 2, 3}, 0.5, 3, false},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9, 9, false},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0.9, 10, false},
	}
	for _, tt := range tests {
		got := percentile(tt.xs, tt.p)
		if (got == nil) != tt.wantNone || got != nil && *got != tt.want {
			t.Errorf("percentile(%v, %g) = %v, want %d (none: %v)", tt.xs, tt.p, got, tt.want, tt.wantNone)
		}
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	cfg := &loop.Config{Goals: []loop.Goal{{Name: "tests"}, {Name: "docs"}, {Name: "unseen"}}}
	g := func(name string, at int, sat bool) state.GoalMemory {
		return state.GoalMemory{Goal: name, SatisfiedAt: at, Satisfied: sat}
	}
	entries := []state.Memory{
		{Goals: []state.GoalMemory{g("tests", 2, true), g("docs", -1, false), g("zeta", 1, true)}},
		{Goals: []state.GoalMemory{g("tests", 4, false), g("docs", -1, false)}},
		{Goals: []state.GoalMemory{g("tests", 3, true)}},
	}
	three := 3
	want := []goalDigest{
		{Goal: "tests", Runs: 3, Satisfied: 2, SuccessRate: 2.0 / 3, Median: &three, P90: ptr(4)},
		{Goal: "docs", Runs: 2, Satisfied: 0, SuccessRate: 0},
		{Goal: "zeta", Runs: 1, Satisfied: 1, SuccessRate: 1, Median: ptr(1), P90: ptr(1)},
	}
	if diff := cmp.Diff(want, digest(entries, cfg)); diff != "" {
		t.Errorf("digest (-want +got):\n%s", diff)
	}
	if got := digestLine(want[0]); got != "tests: 3 runs, 2 satisfied (67%), median 3 / p90 4 iterations" {
		t.Errorf("digestLine: %q", got)
	}
	if got := digestLine(want[1]); got != "docs: 2 runs, 0 satisfied (0%), median n/a / p90 n/a iterations" {
		t.Errorf("digestLine: %q", got)
	}
}

func ptr(n int) *int { return &n }
