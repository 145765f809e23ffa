package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// session is the run a job works on.
type session struct {
	cfg   *loop.Config
	store state.Store
	runID string
	pr    int               // 0 for a branch's run
	head  string            // the commit the run is about
	perms map[string]string // permission by lower-case login, asked once a job
}

// runID is the run-id input, or <loop>/<suffix>.
func (j *job) runID(cfg *loop.Config, suffix string) string {
	if j.in.RunID != "" {
		return j.in.RunID
	}
	return cfg.Name + "/" + strings.Trim(suffix, "/")
}

// open opens the state branch for the run.
func (j *job) open(ctx context.Context, cfg *loop.Config, runID string, pr int, head string) (*session, error) {
	if err := state.ValidRunID(runID); err != nil {
		return nil, err
	}
	remote := j.in.StateRemote
	if remote == "" {
		remote = strings.TrimSuffix(j.ctx.ServerURL, "/") + "/" + j.owner + "/" + j.repo + ".git"
	}
	store, err := state.OpenStore(ctx, "branch:"+j.in.StateBranch, j.workspace, state.RemoteOptions{Remote: remote, Token: j.in.Token})
	if err != nil {
		return nil, fmt.Errorf("open the state branch %q: %w", j.in.StateBranch, err)
	}
	return &session{cfg: cfg, store: store, runID: runID, pr: pr, head: head}, nil
}

// checkpoint loads the run's checkpoint, or nil when it has none yet.
func (s *session) checkpoint(ctx context.Context) (*state.Checkpoint, error) {
	cp, err := s.store.Load(ctx, s.runID)
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	return cp, err
}

// events shows a run's events in the job log and keeps them. When the run
// starts (or resumes) on a pull request, the status turns pending.
type events struct {
	j       *job
	started func()
	all     []ledger.Event
}

func (e *events) Event(ev ledger.Event) {
	e.all = append(e.all, ev)
	fmt.Fprintf(e.j.env.Stdout, "[it %d] %s\n", ev.Iteration, ev.Line())
	if (ev.Type == ledger.RunStarted || ev.Type == ledger.RunResumed) && e.started != nil {
		e.started()
		e.started = nil
	}
}

// runAndReport runs or resumes the loop, then reports everywhere.
func (j *job) runAndReport(ctx context.Context, s *session) error {
	env := lookup(j.env.Environ)
	if ds := s.cfg.CheckEnv(env, loop.Error); ds.HasErrors() {
		return &loop.ConfigError{Diagnostics: ds}
	}
	for _, p := range s.cfg.Providers {
		for _, name := range p.Env {
			if v, _ := env(name); v != "" {
				j.a.AddMask(v)
			}
		}
	}
	out, evs, err := j.run(ctx, s)
	if err != nil {
		return err
	}
	if err := j.report(ctx, s, out, evs, false); err != nil {
		return err
	}
	return j.unsuccessful(out)
}

// run drives the loop under the run's lock.
func (j *job) run(ctx context.Context, s *session) (runner.Outcome, []ledger.Event, error) {
	cp, err := s.checkpoint(ctx)
	if err != nil {
		return runner.Outcome{}, nil, err
	}
	generation := ""
	if cp != nil && cp.Commit != "" && s.head != "" && cp.Commit != s.head {
		generation = fmt.Sprintf("a new generation: the head moved from %s to %s", phrase.Short(cp.Commit), phrase.Short(s.head))
	}
	unlock, err := s.store.Lock(s.runID)
	if err != nil {
		return runner.Outcome{}, nil, fmt.Errorf("lock run %q: %w", s.runID, err)
	}
	defer unlock()
	evs := &events{j: j}
	if s.pr > 0 {
		evs.started = func() { j.status(ctx, s, "pending", "the loop is running") }
	}
	var out runner.Outcome
	j.untrusted(func() {
		out, err = runner.Run(ctx, runner.Options{
			Config: s.cfg, Root: j.workspace, RunID: s.runID, Store: s.store, Env: j.env.Environ,
			Progress: evs, Commit: s.head, Version: j.env.Version, MaxIterations: j.maxIterations(s.cfg),
			Generation: generation, Log: j.env.Stdout, Now: j.env.Now,
			VerifyDecisions: j.verifier(s),
		})
	})
	return out, evs.all, err
}

// maxIterations applies the max-iterations input, which can only lower
// the config's cap.
func (j *job) maxIterations(cfg *loop.Config) int {
	n := j.in.MaxIterations
	switch {
	case n == 0:
		return 0
	case n > cfg.Stop.MaxIterations:
		j.a.Warningf("input max-iterations %d is above stop.max_iterations %d; inputs can only lower budgets, so %d holds", n, cfg.Stop.MaxIterations, cfg.Stop.MaxIterations)
		return 0
	}
	return n
}

// history reads the checks passing after each iteration from the ledger.
func history(ctx context.Context, s *session) []Point {
	b, err := s.store.Ledger(ctx, s.runID)
	if err != nil {
		return nil
	}
	evs, err := ledger.Decode(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	byIter := map[int]Point{}
	var order []int
	for _, e := range evs {
		if e.Type != ledger.GateEvaluated {
			continue
		}
		if _, seen := byIter[e.Iteration]; !seen {
			order = append(order, e.Iteration)
		}
		byIter[e.Iteration] = Point{Iteration: e.Iteration, Passed: e.Passed, Checks: e.Checks}
	}
	out := make([]Point, 0, len(order))
	for _, it := range order {
		out = append(out, byIter[it])
	}
	return out
}

func lookup(environ []string) func(string) (string, bool) {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
