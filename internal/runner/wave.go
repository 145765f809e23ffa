package runner

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
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

// runWave runs the nodes, at most [run] concurrency at once, starting them
// in order. No node starts once a budget is spent.
func (r *iteration) runWave(ctx context.Context, runs []*nodeRun) {
	width := r.cfg.Run.Concurrency
	if width <= 0 || width > len(runs) {
		width = len(runs)
	}
	slots := make(chan struct{}, width)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards the run's spend while nodes finish
	for _, nr := range runs {
		if !nr.queued {
			continue
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			r.runNode(ctx, nr, &mu)
		}()
	}
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
