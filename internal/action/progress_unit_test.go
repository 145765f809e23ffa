package action

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// edits counts the sticky comment writes the fake saw: each begins with
// reading the comments, whether or not its write goes through.
func (m *memJob) edits() int {
	n := 0
	for _, r := range m.gh.Requests() {
		if strings.HasPrefix(r, "GET /repos/octo-org/demo/issues/7/comments?") {
			n++
		}
	}
	return n
}

// TestProgressIsThrottled: with a fake clock, checkpoints inside 30 s of
// the last edit edit nothing, one 30 s later edits again, a checkpoint of
// a run that has stopped edits nothing (the final report is next), and
// after stop nothing edits at all.
func TestProgressIsThrottled(t *testing.T) {
	t.Parallel()
	m := newMemJob(t, demoLoop)
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := start
	m.j.env.Now = func() time.Time { return now }
	p := m.j.newProgress(context.Background(), m.s)
	steps := []struct {
		at     time.Duration
		status state.Status
		edits  int
	}{
		{0, state.Running, 1},
		{1 * time.Second, state.Running, 1},
		{10 * time.Second, state.Running, 1},
		{30*time.Second - 1, state.Running, 1},
		{30 * time.Second, state.Running, 2},
		{59 * time.Second, state.Running, 2},
		{60 * time.Second, state.Running, 3},
		{5 * time.Minute, state.IterationCap, 3},
		{5 * time.Minute, state.Success, 3},
	}
	for i, s := range steps {
		now = start.Add(s.at)
		p.checkpointed(&state.Checkpoint{RunID: m.s.runID, Status: s.status, Iteration: i, MaxIterations: 9, Verdicts: pausedVerdicts()})
		if got := m.edits(); got != s.edits {
			t.Fatalf("after a checkpoint at +%s (%s): %d edits, want %d", s.at, s.status, got, s.edits)
		}
	}
	p.stop()
	now = start.Add(time.Hour)
	p.checkpointed(&state.Checkpoint{RunID: m.s.runID, Status: state.Running, Iteration: 10, MaxIterations: 9})
	if got := m.edits(); got != 3 {
		t.Errorf("%d edits after stop, want 3: the final report is the last write", got)
	}
}

// TestProgressFailureIsAWarningOutsideTheFence: an edit GitHub refuses is
// a warning the runner takes (written between the stop-commands fences),
// the run goes on, and the next checkpoint inside 30 s does not retry.
func TestProgressFailureIsAWarningOutsideTheFence(t *testing.T) {
	t.Parallel()
	m := newMemJob(t, demoLoop)
	m.gh.FailEvery("POST", "/repos/*/*/issues/7/comments", http.StatusBadGateway)
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := start
	m.j.env.Now = func() time.Time { return now }
	p := m.j.newProgress(context.Background(), m.s)
	m.j.log().untrusted(func() {
		p.checkpointed(&state.Checkpoint{RunID: m.s.runID, Status: state.Running, MaxIterations: 9})
		now = now.Add(20 * time.Second)
		p.checkpointed(&state.Checkpoint{RunID: m.s.runID, Status: state.Running, Iteration: 1, MaxIterations: 9})
	})
	if got := m.edits(); got != 1 {
		t.Errorf("%d edit attempts, want 1", got)
	}
	_, fenced := groups(t, m.log.String())
	warn := "::warning::the progress comment was not updated: "
	if !strings.Contains(m.log.String(), warn) || slices.ContainsFunc(fenced, func(l string) bool { return strings.HasPrefix(l, warn) }) {
		t.Errorf("the warning is missing or fenced off:\n%s", m.log)
	}
}

// TestNoProgressWithoutAPullRequestsComment: a branch's run, comment:
// false and no token show no progress.
func TestNoProgressWithoutAPullRequestsComment(t *testing.T) {
	t.Parallel()
	for name, tune := range map[string]func(*memJob){
		"branch":     func(m *memJob) { m.s.pr = 0 },
		"no comment": func(m *memJob) { m.j.in.Comment = false },
		"no token":   func(m *memJob) { m.j.client = nil },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			tune(m)
			p := m.j.newProgress(context.Background(), m.s)
			p.checkpointed(&state.Checkpoint{RunID: m.s.runID, Status: state.Running}) // nil: does nothing
			if p != nil || m.edits() != 0 {
				t.Errorf("progress %v, %d edits", p, m.edits())
			}
		})
	}
}

// TestSpendByProvider sums each node call's spend by the provider it was
// dispatched to, from the run's latest start.
func TestSpendByProvider(t *testing.T) {
	t.Parallel()
	ev := func(typ ledger.Type, it int, node, provider string, tokens int64, cost float64, est bool) ledger.Event {
		return ledger.Event{Type: typ, Iteration: it, Node: node, Provider: provider, Tokens: tokens, CostUSD: cost, Estimated: est}
	}
	old := []ledger.Event{
		{Type: ledger.RunStarted},
		ev(ledger.NodeDispatched, 1, "a", "old", 0, 0, false),
		ev(ledger.NodeSucceeded, 1, "a", "", 999, 9, false),
	}
	run := []ledger.Event{
		{Type: ledger.RunStarted, Reason: "new generation"},
		ev(ledger.NodeDispatched, 1, "fixer", "claude", 0, 0, false),
		ev(ledger.NodeDispatched, 1, "judge", "codex", 0, 0, false),
		ev(ledger.NodeSucceeded, 1, "fixer", "", 100, 0.5, false),
		ev(ledger.NodeFailed, 1, "judge", "", 20, 0.25, true),
		{Type: ledger.RunResumed, Iteration: 1},
		ev(ledger.NodeDispatched, 2, "fixer", "claude", 0, 0, false),
		ev(ledger.NodeSucceeded, 2, "fixer", "", 50, 0.125, true),
		ev(ledger.NodeSkipped, 2, "judge", "", 0, 0, false),
		ev(ledger.NodeSucceeded, 3, "ghost", "", 7, 7, false), // never dispatched
	}
	got := spendByProvider(append(old, run...))
	want := map[string]ProviderSpend{
		"claude": {Tokens: 150, CostUSD: 0.625, Estimated: true},
		"codex":  {Tokens: 20, CostUSD: 0.25, Estimated: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spend by provider (-want +got):\n%s", diff)
	}
	if got := spendJSON(nil); got != "{}" {
		t.Errorf("spendJSON(nil) = %q", got)
	}
	if got := spendJSON(want); got != `{"claude":{"tokens":150,"cost_usd":0.625,"estimated":true},"codex":{"tokens":20,"cost_usd":0.25,"estimated":true}}` {
		t.Errorf("spendJSON = %s", got)
	}
}

// TestProgressIntervalIsTheJobs: the interval is the job's to set; a
// minute holds back an edit 30 s after the last one.
func TestProgressIntervalIsTheJobs(t *testing.T) {
	t.Parallel()
	m := newMemJob(t, demoLoop)
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	m.j.env.Now = func() time.Time { return now }
	m.j.progressEvery = time.Minute
	p := m.j.newProgress(context.Background(), m.s)
	for _, step := range []time.Duration{0, 30 * time.Second, 29 * time.Second, time.Second} {
		now = now.Add(step)
		p.checkpointed(&state.Checkpoint{RunID: m.s.runID, Status: state.Running, MaxIterations: 9})
	}
	if got := m.edits(); got != 2 {
		t.Errorf("%d edits at +0s, +30s, +59s and +60s with a minute between, want 2", got)
	}
}
