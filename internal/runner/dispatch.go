package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner/provider"
	"github.com/loop-action/loop-action/internal/state"
)

// nodeRun is one node's part in one iteration.
type nodeRun struct {
	node    loop.Node
	wave    int
	tier    string
	prompt  string
	skip    string // why it did not run; "" when it ran
	queued  bool   // it was dispatched (a budget may still have stopped it)
	dir     string // an isolated node's worktree
	resp    provider.Response
	answers []string // a judge's answers, one per attempt
	retried string   // why a judge was dispatched again
	usage   provider.Usage
	edited  []string // the files an openai builder's edits wrote
	refused string   // why an openai builder's edits were not applied
}

// dispatched is what the waves of one iteration left.
type dispatched struct {
	runs        []*nodeRun
	judges      map[string]gate.JudgeResult
	ranBuilders []string
	published   []string
	reverted    []string     // protected paths put back after a wave
	gitReverted []string     // .git paths put back after a wave
	rootChanged []string     // root paths put back after a wave of isolated nodes
	swept       <-chan error // the measurement's sweep, started after the last wave (sweepAhead)
}

// dispatch runs the iteration's waves in order. Within a wave, up to
// [run] concurrency nodes run at once; outcomes are recorded after the
// wave, in wave order. Once the last wave's nodes have ended, the
// measurement's sweep starts beside what follows (sweepAhead).
func (r *iteration) dispatch(ctx context.Context, it int, p perturbation) dispatched {
	d := dispatched{judges: map[string]gate.JudgeResult{}}
	waves := r.cfg.Waves()
	for wi, wave := range waves {
		if ctx.Err() != nil {
			break
		}
		wave = p.order(wave)
		ahead := r.scanAhead()
		runs := r.planWave(it, wi+1, wave, p)
		guard, root := r.guardWave(runs, ahead), r.guardRoot(runs)
		r.runWave(ctx, runs)
		if wi == len(waves)-1 {
			d.swept = sweepAhead()
		}
		if err := r.run.files.Restore(); err != nil { // Run returns it at the end
			r.run.logf("%v", err)
		}
		r.recordWave(ctx, it, runs, &d)
		r.noteEdits(runs)
		r.putBack(it, runs, guard, root, &d)
		d.published = append(d.published, r.publish(ctx, it, runs)...)
		r.run.step("published")
	}
	return d
}

// scanAhead scans the guarded paths on a goroutine of its own, beside the
// planning of a wave, which only decides, builds prompts and records (no
// process runs, nothing is written): the wave's guard (guardWave) starts
// from that scan.
func (r *iteration) scanAhead() <-chan guardState {
	g, c := r.run.guarded(), make(chan guardState, 1)
	go func() { c <- g.scan() }()
	return c
}

// guardWave records the guarded paths before a wave in which a node runs,
// as scanAhead found them; with nothing running, nothing is guarded.
func (r *iteration) guardWave(runs []*nodeRun, ahead <-chan guardState) *guardState {
	g := <-ahead
	if !slices.ContainsFunc(runs, func(nr *nodeRun) bool { return nr.queued }) {
		return nil
	}
	return &g
}

// putBack puts back, before anything is published, what the wave changed
// that no node may change: the guarded paths, then (after a wave of
// isolated nodes only) anything in the loop root. Each is recorded; a
// wave that changed any counts as one node failure, and one whose changes
// could not be put back leaves the iteration's measurement void.
func (r *iteration) putBack(it int, runs []*nodeRun, guard *guardState, root *rootGuard, d *dispatched) {
	if guard == nil {
		return
	}
	rv := r.w.revert(it, ranNames(runs), *guard, "")
	rootPaths, rootErr := root.revert(r, it)
	d.reverted = append(d.reverted, rv.protected...)
	d.gitReverted = append(d.gitReverted, rv.git...)
	d.rootChanged = append(d.rootChanged, rootPaths...)
	if r.guardsStopped(rv.failed, rootErr) {
		return
	}
	if len(rv.failed) > 0 {
		r.unfit("guarded paths could not be put back after a wave: " + strings.Join(rv.failed, "; "))
	}
	if rootErr != "" {
		r.unfit(rootErr)
	}
	switch {
	case len(rootPaths) > 0 || rootErr != "":
		r.nodeFailed("changes to the loop root outside the worktrees were reverted")
	case len(rv.git) > 0 && len(rv.protected) == 0:
		r.nodeFailed("changes to .git were reverted")
	case rv.any():
		r.nodeFailed("changes to protected paths were reverted")
	}
}

// planWave decides which nodes of a wave run, recording why the others
// are skipped, and builds the prompts of those that run.
func (r *iteration) planWave(it, wave int, nodes []loop.Node, p perturbation) []*nodeRun {
	var runs []*nodeRun
	pr := r.run.prompts(it, p)
	for _, n := range nodes {
		nr := &nodeRun{node: n, wave: wave, tier: r.run.tier(n)}
		runs = append(runs, nr)
		nr.skip = r.skipReason(n)
		if nr.skip != "" {
			r.rec.Record(ledger.Event{Type: ledger.NodeSkipped, Iteration: it, Wave: wave, Node: n.Name, Reason: nr.skip})
			continue
		}
		nr.queued = true
		nr.prompt = pr.prompt(n)
		r.rec.Record(ledger.Event{Type: ledger.NodeDispatched, Iteration: it, Wave: wave, Node: n.Name,
			Role: n.Role, Provider: n.Provider, Tier: nr.tier})
	}
	return runs
}

// tier is the tier a node runs on now: builders may have been escalated.
func (r *run) tier(n loop.Node) string {
	if t, ok := r.cp.Tiers[n.Name]; ok && n.Role == loop.RoleBuilder {
		return t
	}
	return n.Tier
}

// skipReason says why a node must not run this iteration, or "".
func (r *iteration) skipReason(n loop.Node) string {
	if n.Stage != "" && r.cp.Stages[n.Stage] != "open" {
		return fmt.Sprintf("stage %s is not open (%s)", n.Stage, stageState(r.cp.Stages[n.Stage]))
	}
	if n.Role == loop.RoleJudge {
		return dependence(r.cfg, n)
	}
	if max := r.cfg.Stop.MaxRevisionsPerNode; max > 0 && r.cp.Revisions[n.Name] >= max {
		return fmt.Sprintf("its revisions are spent (%d of max_revisions_per_node = %d)", r.cp.Revisions[n.Name], max)
	}
	if len(n.Goals) > 0 && allSatisfied(r.cp.Verdicts, n.Goals) {
		return "its goals are satisfied (" + strings.Join(n.Goals, ", ") + ")"
	}
	return ""
}

func stageState(s string) string {
	if s == "" {
		return "waiting"
	}
	return s
}

// dependence refuses a judge that shares a provider with a builder of a
// goal it judges; validate rejects such configs, and the runner holds the
// line too.
func dependence(cfg *loop.Config, judge loop.Node) string {
	for _, g := range cfg.Goals {
		for _, ch := range g.Checks {
			if ch.Type != loop.CheckJudge || ch.Node != judge.Name {
				continue
			}
			for _, b := range cfg.Builders(g.Name) {
				if b.Provider == judge.Provider {
					return fmt.Sprintf("refused: it shares provider %s with builder %s of goal %s", judge.Provider, b.Name, g.Name)
				}
			}
		}
	}
	return ""
}

// runWave runs the nodes, at most [run] concurrency at once, starting them
// in order. No node starts once a budget is spent.
func (r *iteration) runWave(ctx context.Context, runs []*nodeRun) {
	queued := 0
	for _, nr := range runs {
		if nr.queued {
			queued++
		}
	}
	width := r.cfg.Run.Concurrency
	if width <= 0 || width > queued {
		width = queued
	}
	jobs := make(chan *nodeRun)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards the run's spend while nodes finish
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for nr := range jobs {
				r.runNode(ctx, nr, &mu)
			}
		}()
	}
	for _, nr := range runs {
		if nr.queued {
			jobs <- nr
		}
	}
	close(jobs)
	wg.Wait()
}

// runNode runs one node unless a budget is spent; a judge whose answer
// holds no parseable verdict is asked once more.
func (r *iteration) runNode(ctx context.Context, nr *nodeRun, mu *sync.Mutex) {
	mu.Lock()
	nr.skip = budgetSpent(ctx, r.cfg.Stop, r.cp.Spend)
	mu.Unlock()
	if nr.skip != "" {
		return
	}
	if err := r.worktree(ctx, nr); err != nil {
		nr.resp = provider.Response{Err: fmt.Errorf("prepare the worktree of node %s: %w", nr.node.Name, err)}
		return
	}
	nr.resp = r.call(ctx, nr)
	r.applyEdits(nr, nr.resp.Answer, nr.root(r.run.opts.Root))
	usage := nr.resp.Usage
	if nr.node.Role == loop.RoleJudge && nr.resp.Err == nil {
		nr.answers = []string{nr.resp.Answer}
		if _, err := gate.ParseVerdict(nr.resp.Answer); err != nil && ctx.Err() == nil {
			nr.retried = "no parseable verdict: " + err.Error()
			nr.resp = r.call(ctx, nr)
			usage = addUsage(usage, nr.resp.Usage)
			nr.answers = append(nr.answers, nr.resp.Answer)
		}
	}
	nr.usage = usage
	mu.Lock()
	r.cp.Spend.Tokens += usage.Total
	r.cp.Spend.CostUSD += usage.CostUSD
	r.cp.Spend.Estimated = r.cp.Spend.Estimated || usage.Estimated
	mu.Unlock()
}

func (r *iteration) call(ctx context.Context, nr *nodeRun) provider.Response {
	p, ok := r.run.providers[nr.node.Provider]
	if !ok {
		return provider.Response{Err: fmt.Errorf("no provider %q", nr.node.Provider)}
	}
	if err := os.MkdirAll(r.run.tmp, 0o700); err != nil {
		return provider.Response{Err: fmt.Errorf("prompt directory: %w", err)}
	}
	env := r.agentEnv(nr)
	if isOpenAI(r.cfg, nr.node) {
		env = r.run.opts.Env // the runner's own request: it needs the key
	}
	return dispatchTo(ctx, p, nr.node, provider.Request{
		RunID: r.cp.RunID, Node: nr.node.Name, Root: nr.root(r.run.opts.Root), HistoryFile: r.run.history,
		Iteration: r.cp.Iteration + 1, Prompt: nr.prompt, Tier: nr.tier, TempDir: r.run.tmp, Env: env,
	})
}

// root is where a node works: its worktree, else the loop root.
func (nr *nodeRun) root(loopRoot string) string {
	if nr.dir != "" {
		return nr.dir
	}
	return loopRoot
}

func addUsage(a, b provider.Usage) provider.Usage {
	return provider.Usage{
		Input: a.Input + b.Input, Output: a.Output + b.Output, Total: a.Total + b.Total,
		CostUSD: a.CostUSD + b.CostUSD, Estimated: a.Estimated || b.Estimated, CostKnown: a.CostKnown && b.CostKnown,
	}
}

// budgetSpent says which budget stops a node from starting, or "".
func budgetSpent(ctx context.Context, s loop.Stop, sp state.Spend) string {
	switch {
	case ctx.Err() != nil:
		return "the run is stopping: " + causeText(ctx)
	case s.MaxTokens > 0 && sp.Tokens >= s.MaxTokens:
		return fmt.Sprintf("the token budget is spent (%d of %d)", sp.Tokens, s.MaxTokens)
	case s.MaxCostUSD > 0 && sp.CostUSD >= s.MaxCostUSD:
		return fmt.Sprintf("the cost budget is spent ($%.4f of $%.2f)", sp.CostUSD, s.MaxCostUSD)
	}
	return ""
}

func causeText(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil {
		return c.Error()
	}
	return "cancelled"
}

// recordWave records each node's outcome in wave order, counts node
// failures and collects the judges' answers for the gate.
func (r *iteration) recordWave(ctx context.Context, it int, runs []*nodeRun, d *dispatched) {
	for _, nr := range runs {
		d.runs = append(d.runs, nr)
		n := nr.node
		if !nr.queued {
			continue // its skip is already recorded
		}
		if nr.skip != "" {
			r.rec.Record(ledger.Event{Type: ledger.NodeSkipped, Iteration: it, Wave: nr.wave, Node: n.Name, Reason: nr.skip})
			continue
		}
		if nr.retried != "" {
			r.rec.Record(ledger.Event{Type: ledger.JudgeRetried, Iteration: it, Wave: nr.wave, Node: n.Name, Reason: nr.retried})
		}
		e := ledger.Event{Iteration: it, Wave: nr.wave, Node: n.Name, Duration: nr.resp.Result.Duration,
			Tokens: nr.usage.Total, Estimated: nr.usage.Estimated, CostUSD: nr.usage.CostUSD}
		if nr.resp.Err != nil {
			e.Type, e.Reason = ledger.NodeFailed, nr.resp.Err.Error()
			r.countFailure(ctx, nr)
		} else {
			e.Type = ledger.NodeSucceeded
		}
		r.rec.Record(e)
		if n.Role == loop.RoleJudge {
			d.judges[n.Name] = judgeResult(nr)
		} else {
			d.ranBuilders = append(d.ranBuilders, n.Name)
		}
	}
}

func judgeResult(nr *nodeRun) gate.JudgeResult {
	jr := gate.JudgeResult{Node: nr.node.Name, Provider: nr.node.Provider, Answers: nr.answers}
	if nr.resp.Err != nil {
		jr.Err = nr.resp.Err.Error()
	}
	return jr
}

// countFailure counts a node's error or timeout against max_node_failures;
// a node that could not even start escalates the run at once. A node cut
// short because the run itself was stopping is not its fault.
func (r *iteration) countFailure(ctx context.Context, nr *nodeRun) {
	res := nr.resp.Result
	if res.Canceled || ctx.Err() != nil {
		return
	}
	r.cp.NodeFailures++
	switch max := r.cfg.Stop.MaxNodeFailures; {
	case res.StartErr != nil && r.run.escalate == "":
		r.run.escalate = fmt.Sprintf("dispatch failure: node %s could not start: %v", nr.node.Name, res.StartErr)
	case max > 0 && r.cp.NodeFailures >= max && r.run.escalate == "":
		r.run.escalate = fmt.Sprintf("%s (max_node_failures = %d); the last: node %s: %v", phrase.Plural(r.cp.NodeFailures, "node failure", "node failures"), max, nr.node.Name, nr.resp.Err)
	}
}

// ranNames are the nodes of a wave that ran, builders and judges.
func ranNames(runs []*nodeRun) []string {
	var out []string
	for _, nr := range runs {
		if nr.queued && nr.skip == "" {
			out = append(out, nr.node.Name)
		}
	}
	return out
}
