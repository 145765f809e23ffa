package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/gate/evidence"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// RecordingStore is a store that keeps runs' recordings (the dir: store).
type RecordingStore interface {
	Load(ctx context.Context, runID string) (*state.Checkpoint, error)
	Recordings(ctx context.Context, runID string) ([]state.Recording, storer.EncodedObjectStorer, error)
}

// ReplayOptions are what a replay needs. Root is a scratch directory the
// recorded snapshots are restored into and measured in; never a loop root.
type ReplayOptions struct {
	Config   *loop.Config
	Store    RecordingStore
	RunID    string
	Root     string
	Env      []string
	Checkout workspace.Checkout
}

// ErrReplayMismatch is returned when the config given does not match the
// recording: a recorded node missing or with another role, or a judge
// check whose node has no recorded answers.
var ErrReplayMismatch = errors.New("the config does not match the recording")

// GoalStatus is one goal's verdict in a replay's comparison.
type GoalStatus struct {
	Goal      string `json:"goal"`
	Satisfied bool   `json:"satisfied"`
	Passed    int    `json:"passed"`
	Total     int    `json:"total"`
}

// ReplayedIteration is one iteration: the recorded and the replayed verdicts.
type ReplayedIteration struct {
	Iteration int          `json:"iteration"`
	Recorded  []GoalStatus `json:"recorded"`
	Replayed  []GoalStatus `json:"replayed"`
}

// ReplayResult is what a replay found.
type ReplayResult struct {
	RunID      string              `json:"run_id"`
	Iterations []ReplayedIteration `json:"iterations"`
	Recorded   state.Status        `json:"recorded_status"`
	Replayed   state.Status        `json:"replayed_status"` // "running" when the replayed config would not stop
	Reproduced bool                `json:"reproduced"`
	// Where it first diverged, when it did.
	DivergedAt int    `json:"diverged_at,omitempty"`
	Goal       string `json:"goal,omitempty"`
	Divergence string `json:"divergence,omitempty"`
}

// Replay re-executes a recorded run with opts.Config, iteration by
// iteration, calling no agent: each recorded snapshot is restored into
// opts.Root and measured for real (checks, metrics), the recorded judges'
// answers and the checkpoint's review decisions are added, the gate rules
// and the config's stop ladder is applied; then the verdicts are compared
// with the recorded ones.
func Replay(ctx context.Context, opts ReplayOptions) (ReplayResult, error) {
	res := ReplayResult{RunID: opts.RunID}
	cp, err := opts.Store.Load(ctx, opts.RunID)
	if err != nil {
		return res, err
	}
	recs, objs, err := opts.Store.Recordings(ctx, opts.RunID)
	if err != nil {
		return res, err
	}
	if err := matchRecording(opts.Config, recs); err != nil {
		return res, err
	}
	res.Recorded = cp.Status
	lad := ladder{cfg: opts.Config}
	for _, rec := range recs {
		verdicts, err := replayOne(ctx, opts, objs, rec, cp.Decisions)
		if err != nil {
			return res, fmt.Errorf("replay iteration %d of run %q: %w", rec.Iteration, opts.RunID, err)
		}
		ri := ReplayedIteration{Iteration: rec.Iteration, Recorded: statuses(rec.Verdicts), Replayed: statuses(verdicts)}
		res.Iterations = append(res.Iterations, ri)
		if g, ok := firstDiff(ri.Recorded, ri.Replayed); ok && res.Divergence == "" {
			res.DivergedAt, res.Goal = rec.Iteration, g
			res.Divergence = fmt.Sprintf("iteration %d, goal %q: recorded %s, replayed %s", rec.Iteration, g,
				statusOf(ri.Recorded, g), statusOf(ri.Replayed, g))
		}
		st := lad.next(rec, verdicts)
		res.Replayed = st
		if st != state.Running && rec.Iteration < recs[len(recs)-1].Iteration {
			if res.Divergence == "" {
				res.DivergedAt = rec.Iteration
				res.Divergence = fmt.Sprintf("the replayed config would have stopped at iteration %d with %s; the recording went on", rec.Iteration, st)
			}
			break
		}
	}
	if res.Divergence == "" && !sameStop(res.Recorded, res.Replayed) {
		res.DivergedAt = recs[len(recs)-1].Iteration
		res.Divergence = fmt.Sprintf("the replayed config stops with %s at iteration %d where the recording stopped with %s", res.Replayed, res.DivergedAt, res.Recorded)
	}
	res.Reproduced = res.Divergence == ""
	return res, nil
}

// sameStop reports whether the replayed stop matches the recorded one.
// What the gate does not decide (an escalation, the wall clock, a
// cancellation, a run still going) is matched by a replay that does not
// stop.
func sameStop(recorded, replayed state.Status) bool {
	switch recorded {
	case state.Escalated, state.WallClock, state.Cancelled, state.Running:
		return replayed == state.Running
	}
	return recorded == replayed
}

// replayOne restores one recorded snapshot and lets the gate rule on it.
func replayOne(ctx context.Context, opts ReplayOptions, objs storer.EncodedObjectStorer, rec state.Recording, decisions []gate.Decision) ([]gate.Verdict, error) {
	if _, err := workspace.RestoreWith(ctx, opts.Root, objs, workspace.Snapshot(rec.Snapshot), opts.Checkout); err != nil {
		return nil, err
	}
	k := opts.Checkout
	k.MaxFileSize = opts.Config.Run.MaxFileSize.Bytes
	c := checkCollector(opts.Config, opts.Root, opts.Env, workspace.NewHasherWith(opts.Root, k))
	ev := c.Collect(ctx, opts.Config)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	ev.Judges, ev.Decisions = rec.Judges, decisions
	ev = evidence.Masked(ev, Masker(opts.Config, opts.Env))
	verdicts := gate.Evaluate(opts.Config, ev)
	if why := joinReasons(rec.Void, ev.Void); why != "" {
		verdicts = voided(verdicts, why)
	}
	return verdicts, nil
}

// ladder is the stop ladder of a replayed run: what the gate and the
// recorded spend decide.
type ladder struct {
	cfg   *loop.Config
	sig   string
	stale int
}

func (l *ladder) next(rec state.Recording, verdicts []gate.Verdict) state.Status {
	sig := gate.Signature(verdicts)
	switch {
	case rec.Iteration == 0:
	case sig == l.sig:
		l.stale++
	default:
		l.stale = 0
	}
	l.sig = sig
	s := l.cfg.Stop
	switch {
	case gate.OverallSuccess(l.cfg, verdicts):
		return state.Success
	case gate.AwaitingReview(l.cfg, verdicts):
		return state.AwaitingReview
	case rec.Iteration == 0:
		return state.Running // the baseline: only success or a review stops it
	case s.NoProgress > 0 && l.stale >= s.NoProgress:
		return state.NoProgress
	case s.MaxIterations > 0 && rec.Iteration >= s.MaxIterations:
		return state.IterationCap
	case s.MaxTokens > 0 && rec.Spend.Tokens >= s.MaxTokens:
		return state.TokenBudget
	case s.MaxCostUSD > 0 && rec.Spend.CostUSD >= s.MaxCostUSD:
		return state.CostBudget
	}
	return state.Running
}

// matchRecording refuses a config whose nodes do not match the recording.
func matchRecording(cfg *loop.Config, recs []state.Recording) error {
	answered := map[string]bool{}
	for _, rec := range recs {
		for _, c := range rec.Calls {
			n, ok := cfg.Node(c.Node)
			switch {
			case !ok:
				return fmt.Errorf("%w: node %q of iteration %d is not in the config", ErrReplayMismatch, c.Node, rec.Iteration)
			case string(n.Role) != c.Role:
				return fmt.Errorf("%w: node %q is a %s in the config but ran as a %s", ErrReplayMismatch, c.Node, n.Role, c.Role)
			}
		}
		for name := range rec.Judges {
			answered[name] = true
		}
	}
	for _, g := range cfg.Goals {
		for _, c := range g.Checks {
			if c.Type == loop.CheckJudge && !answered[c.Node] {
				return fmt.Errorf("%w: goal %q has a judge check of node %q, which has no recorded answers", ErrReplayMismatch, g.Name, c.Node)
			}
		}
	}
	return nil
}

func statuses(vs []gate.Verdict) []GoalStatus {
	out := make([]GoalStatus, len(vs))
	for i, v := range vs {
		out[i] = GoalStatus{Goal: v.Goal, Satisfied: v.Satisfied, Passed: v.Passed, Total: v.Total}
	}
	return out
}

// firstDiff is the first goal satisfied in one of a and b but not in the
// other: a config with another number of checks counts other passes, and
// is compared on what the gate decides.
func firstDiff(a, b []GoalStatus) (string, bool) {
	for _, x := range a {
		if y, ok := find(b, x.Goal); !ok || y.Satisfied != x.Satisfied {
			return x.Goal, true
		}
	}
	for _, y := range b {
		if _, ok := find(a, y.Goal); !ok {
			return y.Goal, true
		}
	}
	return "", false
}

func find(gs []GoalStatus, goal string) (GoalStatus, bool) {
	for _, g := range gs {
		if g.Goal == goal {
			return g, true
		}
	}
	return GoalStatus{}, false
}

func statusOf(gs []GoalStatus, goal string) string {
	g, ok := find(gs, goal)
	switch {
	case !ok:
		return "no such goal"
	case g.Satisfied:
		return fmt.Sprintf("satisfied %d/%d", g.Passed, g.Total)
	}
	return fmt.Sprintf("unsatisfied %d/%d", g.Passed, g.Total)
}
