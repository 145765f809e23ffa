package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
)

type planCmd struct {
	JSON bool `help:"Print the plan as JSON."`
}

func (planCmd) Help() string {
	return `Shows the waves nodes run in, the stage order, the provider command and tier
of every node, each provider's command as its preset expands it (with the
placeholders, and the names of its variables, never their values), what each
goal checks, every budget, and the worst-case cost where prices are known. It
invokes no provider and runs no check.

Example:
  loop-action -C examples/quickstart plan`
}

// planView is what plan prints.
type planView struct {
	Name        string            `json:"name"`
	File        string            `json:"file"`
	Waves       [][]plannedNode   `json:"waves"`
	Providers   []plannedProvider `json:"providers"`
	Stages      [][]string        `json:"stages"`
	Goals       []plannedGoal     `json:"goals"`
	Stop        loop.Stop         `json:"stop"`
	Concurrency int               `json:"concurrency"`
	Cost        costView          `json:"cost_ceiling"`
	Dispatches  int               `json:"max_dispatches"`
	Memory      []goalDigest      `json:"memory,omitempty"` // with [memory] on: what the local store's entries show
}

type plannedNode struct {
	Name     string   `json:"name"`
	Role     string   `json:"role"`
	Provider string   `json:"provider"`
	Tier     string   `json:"tier"`
	Argv     []string `json:"argv"`
	Goals    []string `json:"goals,omitempty"`
	Stage    string   `json:"stage,omitempty"`
	Isolate  bool     `json:"isolate,omitempty"`
}

type plannedGoal struct {
	Name     string   `json:"name"`
	Blocking bool     `json:"blocking"`
	Checks   []string `json:"checks"`
}

type costView struct {
	USD   *float64 `json:"usd"`
	Basis string   `json:"basis"`
}

func (p *planCmd) Run(c *cli, d *deps) error {
	cfg, err := c.load(d)
	if err != nil {
		return err
	}
	v := newPlanView(cfg)
	if v.Memory, err = localDigest(c, d, cfg); err != nil {
		return err
	}
	if p.JSON {
		return writeJSON(d, v)
	}
	fmt.Fprint(d.stderr, cfg.Warnings.String())
	return v.write(d.stdout)
}

func newPlanView(cfg *loop.Config) planView {
	v := planView{Name: cfg.Name, File: cfg.File, Stop: cfg.Stop, Concurrency: cfg.Run.Concurrency,
		Dispatches: len(cfg.Nodes) * cfg.Stop.MaxIterations, Stages: [][]string{}, Providers: plannedProviders(cfg)}
	for _, wave := range cfg.Waves() {
		var w []plannedNode
		for _, n := range wave {
			w = append(w, plannedNode{Name: n.Name, Role: n.Role, Provider: n.Provider, Tier: n.Tier,
				Argv: cfg.Providers[n.Provider].Argv(n.Tier), Goals: judgedOr(cfg, n), Stage: n.Stage, Isolate: n.Isolate})
		}
		v.Waves = append(v.Waves, w)
	}
	for _, step := range cfg.StageOrder() {
		var names []string
		for _, s := range step {
			names = append(names, s.Name)
		}
		v.Stages = append(v.Stages, names)
	}
	for _, g := range cfg.Goals {
		pg := plannedGoal{Name: g.Name, Blocking: g.IsBlocking()}
		for _, ch := range g.Checks {
			pg.Checks = append(pg.Checks, ch.Describe())
		}
		v.Goals = append(v.Goals, pg)
	}
	cc := cfg.CostCeiling()
	v.Cost.Basis = cc.Basis
	if cc.Known {
		v.Cost.USD = &cc.USD
	}
	return v
}

// judgedOr returns a builder's goals, or the goals a judge rules on.
func judgedOr(cfg *loop.Config, n loop.Node) []string {
	if n.Role == loop.RoleBuilder {
		return n.Goals
	}
	var out []string
	for _, g := range cfg.Goals {
		for _, ch := range g.Checks {
			if ch.Type == loop.CheckJudge && ch.Node == n.Name {
				out = append(out, g.Name)
				break
			}
		}
	}
	return out
}

func (v planView) write(w io.Writer) error {
	p := &printer{w: w}
	p.f("loop %q (%s)\n", v.Name, v.File)
	p.f("\nwaves (at most %s at once):\n", concurrency(v.Concurrency))
	for i, wave := range v.Waves {
		p.f("  %d.", i+1)
		for k, n := range wave {
			if k > 0 {
				p.f("    ")
			}
			p.f(" %s [%s] on %s (%s tier): %s\n", n.Name, n.Role, n.Provider, n.Tier, quoteTemplate(n.Argv))
			p.f("       %s\n", nodeDetails(n))
		}
	}
	if len(v.Waves) == 0 {
		p.f("  (no nodes: each iteration only measures)\n")
	}
	v.writeProviders(p)
	v.writeStages(p)
	p.f("\ngoals:\n")
	for _, g := range v.Goals {
		kind := "blocking"
		if !g.Blocking {
			kind = "advisory"
		}
		p.f("  %s (%s)\n", g.Name, kind)
		for _, ch := range g.Checks {
			p.f("    - %s\n", ch)
		}
	}
	v.writeBudgets(p)
	return p.err
}

func concurrency(n int) string {
	if n == 0 {
		return "a whole wave"
	}
	return phrase.Plural(n, "node", "nodes")
}

func nodeDetails(n plannedNode) string {
	var parts []string
	switch {
	case n.Role == loop.RoleJudge && len(n.Goals) > 0:
		parts = append(parts, "judges "+strings.Join(n.Goals, ", "))
	case len(n.Goals) > 0:
		parts = append(parts, "advances "+strings.Join(n.Goals, ", "))
	default:
		parts = append(parts, "no goals")
	}
	if n.Stage != "" {
		parts = append(parts, "stage "+n.Stage)
	}
	if n.Isolate {
		parts = append(parts, "isolated worktree")
	}
	return strings.Join(parts, "; ")
}

func (v planView) writeStages(p *printer) {
	if len(v.Stages) == 0 {
		return
	}
	p.f("\nstages, in the order they open:\n")
	for i, step := range v.Stages {
		p.f("  %d. %s\n", i+1, strings.Join(step, ", "))
	}
}

func (v planView) writeBudgets(p *printer) {
	s := v.Stop
	p.f("\nbudgets:\n")
	p.f("  iterations       %d\n", s.MaxIterations)
	p.f("  no progress      %s\n", setOr(s.NoProgress != 0, fmt.Sprintf("stop after %d stale iterations", s.NoProgress), "off"))
	p.f("  perturb          %s\n", setOr(s.PerturbAfter != 0, fmt.Sprintf("after %d stale iterations", s.PerturbAfter), "off"))
	p.f("  wall clock       %s\n", setOr(s.MaxWallClock.IsSet(), s.MaxWallClock.String(), "none"))
	p.f("  tokens           %s\n", setOr(s.MaxTokens > 0, fmt.Sprint(s.MaxTokens), "none"))
	p.f("  cost             %s\n", setOr(s.MaxCostUSD > 0, fmt.Sprintf("$%.2f", s.MaxCostUSD), "none"))
	p.f("  node revisions   %s\n", setOr(s.MaxRevisionsPerNode > 0, fmt.Sprintf("%d failed revisions per builder", s.MaxRevisionsPerNode), "none"))
	p.f("  node failures    %s\n", setOr(s.MaxNodeFailures != 0, fmt.Sprintf("escalate at %d", s.MaxNodeFailures), "off"))
	if v.Cost.USD != nil {
		p.f("\nworst-case cost: $%.2f (%s)\n", *v.Cost.USD, v.Cost.Basis)
	} else {
		p.f("\nworst-case cost: unknown (%s)\n", v.Cost.Basis)
	}
	p.f("at most %d node dispatches (%d nodes × %d iterations), plus one retry per judge per iteration\n",
		v.Dispatches, v.Dispatches/max(s.MaxIterations, 1), s.MaxIterations)
	if len(v.Memory) > 0 {
		p.f("\nmemory (earlier runs in .loop/state):\n")
	}
	for _, dg := range v.Memory {
		note := ""
		if dg.P90 != nil && *dg.P90 > s.MaxIterations {
			note = fmt.Sprintf(" — above max_iterations %d", s.MaxIterations)
		}
		p.f("  %s%s\n", digestLine(dg), note)
	}
}

// localDigest is what the memory entries of cfg's loop in the loop root's
// dir: store show, when [memory] is on and the store exists: plan opens no
// remote and creates nothing.
func localDigest(c *cli, d *deps, cfg *loop.Config) ([]goalDigest, error) {
	dir := filepath.Join(c.root(d), ".loop", "state")
	if !cfg.Memory.Enabled {
		return nil, nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil
	}
	store, err := state.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	all, err := store.Memory(d.ctx)
	if err != nil {
		return nil, err
	}
	mine := slices.DeleteFunc(all, func(m state.Memory) bool { return m.Loop != cfg.Name })
	if len(mine) == 0 {
		return nil, nil
	}
	return digest(mine, cfg), nil
}

// setOr is s for a budget that is set, or else unset ("off", "none").
func setOr(set bool, s, unset string) string {
	if !set {
		return unset
	}
	return s
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
