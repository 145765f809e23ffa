package hook

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
)

// Gate rules on the trees a hook gates, each in the isolated checkout
// with the config that tree holds.
type Gate struct {
	Repo    *Repo
	Env     []string // the hook's environment, as git gave it
	Config  string   // --config: a path in the tree; "" for the default paths
	Version string   // the binary's version, part of the cache key
	NoCache bool     // measure even a tree the cache certified
	Log     io.Writer
}

// Result is the gate's answer on one target.
type Result struct {
	Target   Target
	Config   *loop.Config // the goals [hook] gates, as the target's config says
	Verdicts []gate.Verdict
	Success  bool
	Cached   bool     // answered from the verdict cache, nothing measured
	Changed  []string // what the checks changed in the checkout: no verdict on the target's tree
	Checkout string   // where it was measured
}

// Check rules on t: from the cache when the same tree passed under the
// same config, checks and environment; otherwise by checking t out in the
// isolated checkout and measuring there (runner.Measure). A pass is
// remembered. The error is a config or git problem: no ruling at all.
func (g *Gate) Check(ctx context.Context, t Target) (Result, error) {
	name, src, err := g.Repo.configAt(ctx, t.Tree, g.Config)
	if err != nil {
		return Result{}, err
	}
	cfg, err := parseConfig(name, src)
	if err != nil {
		return Result{}, err
	}
	res := Result{Target: t, Config: cfg}
	key := cacheKey(g.Version, t.Tree, name, src, cfg, g.Env)
	if !g.NoCache {
		if v, ok := g.Repo.cached(key, t.Tree, cfg); ok {
			res.Verdicts, res.Success, res.Cached = v, true, true
			return res, nil
		}
	}
	release, err := g.Repo.lock()
	if err != nil {
		return Result{}, err
	}
	defer release()
	fmt.Fprintf(g.Log, "loop-action hook: measuring %s in .loop/hook/checkout\n", t.Name())
	if res.Checkout, err = g.Repo.checkout(ctx, t.Commit, cfg.Hook.CleanIgnored); err != nil {
		return Result{}, err
	}
	k, err := runner.ReadCheckout(ctx, res.Checkout, CleanEnv(g.Env))
	if err != nil {
		return Result{}, fmt.Errorf("isolated checkout: %w", err)
	}
	_, res.Verdicts, err = runner.Measure(ctx, cfg, res.Checkout, CleanEnv(g.Env), k)
	if err != nil {
		return Result{}, err
	}
	if res.Changed, err = g.Repo.settle(ctx, res.Checkout, t.Commit); err != nil {
		return Result{}, fmt.Errorf("isolated checkout: %w", err)
	}
	res.Success = gate.OverallSuccess(cfg, res.Verdicts) && len(res.Changed) == 0
	if res.Success {
		if err := g.Repo.remember(key, t.Tree, name, res.Verdicts); err != nil {
			fmt.Fprintf(g.Log, "loop-action hook: %v (the verdict stands; it is not cached)\n", err)
		}
	}
	return res, nil
}

// ChangedNote explains a result whose checks changed the checkout.
func (r Result) ChangedNote() string {
	const most = 10
	shown := r.Changed[:min(len(r.Changed), most)]
	more := ""
	if len(r.Changed) > most {
		more = fmt.Sprintf(" and %d more", len(r.Changed)-most)
	}
	return fmt.Sprintf("the checks changed the checkout of %s (%s%s): their verdict is not on the tree being gated, as CI's status rule would not be; commit what they change, or have them write only ignored files",
		r.Target.Name(), strings.Join(shown, ", "), more)
}
