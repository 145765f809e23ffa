package runner

import (
	"errors"
	"testing"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

const replayJudged = `
name = "judged"
[stop]
max_iterations = 3
[providers.a]
command = ["a"]
[providers.b]
command = ["b"]
[[node]]
name = "fixer"
provider = "a"
goals = ["tests"]
[[node]]
name = "review"
role = "judge"
provider = "b"
after = ["fixer"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "judge"
  node = "review"
`

func TestMatchRecording(t *testing.T) {
	t.Parallel()
	cfg, err := loop.Parse("loop.toml", []byte(replayJudged))
	if err != nil {
		t.Fatal(err)
	}
	answered := state.Recording{Iteration: 1, Calls: []state.Call{{Node: "fixer", Role: "builder"}, {Node: "review", Role: "judge"}},
		Judges: map[string]gate.JudgeResult{"review": {Node: "review", Answers: []string{"x"}}}}
	for _, tc := range []struct {
		name     string
		recs     []state.Recording
		mismatch bool
	}{
		{"matches", []state.Recording{{Iteration: 0}, answered}, false},
		{"judge never answered", []state.Recording{{Iteration: 0}, {Iteration: 1, Calls: []state.Call{{Node: "fixer", Role: "builder"}}}}, true},
		{"node missing", []state.Recording{answered, {Iteration: 2, Calls: []state.Call{{Node: "mender", Role: "builder"}}}}, true},
		{"other role", []state.Recording{answered, {Iteration: 2, Calls: []state.Call{{Node: "fixer", Role: "judge"}}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := matchRecording(cfg, tc.recs)
			if got := errors.Is(err, ErrReplayMismatch); got != tc.mismatch {
				t.Errorf("matchRecording: %v; want a mismatch: %v", err, tc.mismatch)
			}
		})
	}
}

func TestReplayLadder(t *testing.T) {
	t.Parallel()
	cfg, err := loop.Parse("loop.toml", []byte(replayJudged+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Stop.NoProgress = 2
	fail := []gate.Verdict{{Goal: "tests", Total: 1}}
	l := ladder{cfg: cfg}
	var got []state.Status
	for it := range 4 {
		got = append(got, l.next(state.Recording{Iteration: it}, fail))
	}
	want := []state.Status{state.Running, state.Running, state.NoProgress, state.NoProgress}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("iteration %d: %s; want %s", i, got[i], want[i])
		}
	}
}
