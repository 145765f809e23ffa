package action

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// session is the run a job works on, held through a runner session from
// open to close: the run's lock is taken and its checkpoint loaded (and
// its decisions verified) once, before any comment is handled.
type session struct {
	cfg    *loop.Config
	store  state.Store
	run    *runner.Session
	runID  string
	pr     int    // 0 for a branch's run
	head   string // the commit the run is about
	branch string // the branch head is on: the pull request's, or the run's
	// handled says, a line each, what became of the commands this job
	// handled: what an issue_comment job that runs nothing reports.
	handled []string
	// delivered says the delivery the checkpoint records was verified
	// (verifyDelivery) and names the head; beside, that it was verified
	// and names a commit on another branch (a branch's run delivers onto
	// loop/<name>); unverified, why it was ignored.
	delivered  bool
	beside     bool
	unverified string
	evs        *events
}

// runID is the run-id input, or <loop>/<suffix>.
func (j *job) runID(cfg *loop.Config, suffix string) string {
	if j.in.RunID != "" {
		return j.in.RunID
	}
	return cfg.Name + "/" + strings.Trim(suffix, "/")
}

// open opens the state branch and a session on the run; close it.
func (j *job) open(ctx context.Context, cfg *loop.Config, runID string, pr int, head string) (*session, error) {
	if err := state.ValidRunID(runID); err != nil {
		return nil, err
	}
	store, err := j.openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, store: store, runID: runID, pr: pr, head: head, evs: &events{j: j}}
	if pr > 0 {
		s.evs.started = func() { j.pub().status(ctx, s, "pending", "the loop is running") }
	}
	s.evs.progress = j.newProgress(ctx, s)
	maxIter, _ := maxIterations(j.in.MaxIterations, cfg)
	s.run, err = runner.Open(ctx, runner.Options{
		Config: cfg, Root: j.workspace, RunID: runID, Store: store, Env: j.env.Environ,
		Progress: s.evs, Commit: head, Checkout: j.checkout, Version: j.env.Version, MaxIterations: maxIter,
		Log: j.env.Stdout, Now: j.env.Now, VerifyDecisions: j.verifier(s),
		Checkpointed: s.evs.progress.checkpointed,
	})
	if err != nil {
		return nil, errors.Join(err, store.Close())
	}
	return s, nil
}

// openStore opens the state branch (or the store the tests give), which
// reads the workspace into each checkpoint as cfg's runs do.
func (j *job) openStore(ctx context.Context, cfg *loop.Config) (state.Store, error) {
	if j.stores != nil {
		return j.stores(ctx)
	}
	store, err := state.OpenStore(ctx, "branch:"+j.in.StateBranch, j.workspace, state.RemoteOptions{Remote: j.pub().stateRemote(), Token: j.in.Token, Checkout: j.checkoutOf(cfg)})
	if err != nil {
		return nil, fmt.Errorf("open the state branch %q: %w", j.in.StateBranch, err)
	}
	return store, nil
}

// checkoutOf is how the workspace is read under cfg: with the job's git
// settings, and cfg's run.max_file_size.
func (j *job) checkoutOf(cfg *loop.Config) workspace.Checkout {
	k := j.checkout
	k.MaxFileSize = cfg.Run.MaxFileSize.Bytes
	return k
}

// repoURL is the repository's git URL on the server: where delivered work
// is pushed.
func (p *publisher) repoURL() string {
	return strings.TrimSuffix(p.ctx.ServerURL, "/") + "/" + p.owner + "/" + p.repo + ".git"
}

// stateRemote is the URL of the repository that holds the state branch.
func (p *publisher) stateRemote() string { return cmp.Or(p.in.StateRemote, p.repoURL()) }

// checkpoint is the run's checkpoint as the session holds it, or nil.
func (s *session) checkpoint() *state.Checkpoint {
	if s.run == nil {
		return nil
	}
	return s.run.Checkpoint()
}

// close releases the run, then the state branch.
func (s *session) close() error { return errors.Join(s.run.Close(), s.store.Close()) }

// events shows a run's events in the job log and keeps them, each
// iteration in its own group. When the run starts (or resumes) on a pull
// request, the status turns pending; progress, when set, follows what
// runs.
type events struct {
	j        *job
	started  func()
	all      []ledger.Event
	progress *progress
}

func (e *events) Event(ev ledger.Event) {
	e.all = append(e.all, ev)
	switch ev.Type {
	case ledger.IterationStarted:
		e.j.log().iteration(ev.Iteration)
	case ledger.StopTriggered:
		e.j.log().endIterations()
	}
	if e.progress != nil {
		e.progress.event(ev)
	}
	fmt.Fprintf(e.j.env.Stdout, "[it %d] %s\n", ev.Iteration, ev.Line())
	if (ev.Type == ledger.RunStarted || ev.Type == ledger.RunResumed) && e.started != nil {
		e.started()
		e.started = nil
	}
}

// runAndReport runs or resumes the loop — or, on the loop's own work, only
// measures it (recheck) — applies the status rule and delivers what was
// certified (conclude), then reports everywhere.
func (j *job) runAndReport(ctx context.Context, s *session) error {
	env := environ.Env(j.env.Environ).Lookup
	if ds := s.cfg.CheckEnv(env, loop.Error); ds.HasErrors() {
		return &loop.ConfigError{Diagnostics: ds}
	}
	for _, p := range s.cfg.Providers {
		for _, name := range p.Env {
			if v, _ := env(name); v != "" {
				j.a.AddMask(v)
			}
		}
		secret := p.SecretEnvValues() // masked like an array's variables (docs/config.md, Environment)
		for _, k := range slices.Sorted(maps.Keys(secret)) {
			j.a.AddMask(secret[k])
		}
	}
	if err := j.verifyDelivery(ctx, s); err != nil {
		return err
	}
	var out runner.Outcome
	var dv delivery
	var err error
	if why := deliveredHead(s); why != "" {
		out, dv, err = j.recheck(ctx, s, why)
	} else if out, err = j.run(ctx, s); err == nil {
		dv = j.conclude(ctx, s, out)
	}
	if err != nil {
		s.evs.progress.abandon()
		return err
	}
	if err := j.pub().report(ctx, s, out, dv, s.evs.all, false); err != nil {
		return err
	}
	return j.in.unsuccessful(out, dv)
}

// run drives the loop in the session, as a new generation when generation
// says so.
func (j *job) run(ctx context.Context, s *session) (runner.Outcome, error) {
	if why := generation(s); why != "" {
		s.run.NewGeneration(why)
	}
	if _, over := maxIterations(j.in.MaxIterations, s.cfg); over {
		j.a.Warningf("input max-iterations %d is above stop.max_iterations %d; inputs can only lower budgets, so %d holds", j.in.MaxIterations, s.cfg.Stop.MaxIterations, s.cfg.Stop.MaxIterations)
	}
	var out runner.Outcome
	var err error
	j.log().untrusted(func() { out, err = s.run.Run(ctx) })
	s.evs.progress.stop() // the final report is the last word
	j.log().endIterations()
	return out, err
}

// maxIterations applies the max-iterations input n, which can only lower
// the config's cap; over says it asked to raise it (and was ignored).
func maxIterations(n int, cfg *loop.Config) (limit int, over bool) {
	if n > cfg.Stop.MaxIterations {
		return 0, true
	}
	return n, false
}

// ledgerOf reads the run's ledger from the store; nil when it cannot.
func ledgerOf(ctx context.Context, s *session) []ledger.Event {
	b, err := s.store.Ledger(ctx, s.runID)
	if err != nil {
		return nil
	}
	evs, err := ledger.Decode(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	return evs
}

// history is the checks passing after each iteration, by the ledger.
func history(evs []ledger.Event) []Point {
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
