package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

type memoryCmd struct {
	List   memoryListCmd   `cmd:"" default:"withargs" help:"List the memory entries of the loop's runs, with a digest per goal (the default)."`
	Forget memoryForgetCmd `cmd:"" help:"Drop memory entries: by ID (RUN-ID@GENERATION), or every entry of a run."`
}

type memoryListCmd struct {
	storeFlags `embed:""`
	JSON       bool   `help:"Print {\"entries\": [...], \"digest\": [...]} as JSON."`
	Goal       string `placeholder:"GOAL" help:"Only this goal, in the entries and the digest."`
	All        bool   `help:"Every loop's entries, not only the config's loop (no config is read)."`
}

func (memoryListCmd) Help() string {
	return `Lists what earlier runs left in memory ([memory] in the config): one entry per
run generation that ended, the latest first, and per goal a digest across them:
runs holding it, how many satisfied it, and the median and p90 iteration that
first satisfied it. Only the config's loop counts, unless --all.

Example:
  loop-action memory
  loop-action memory --json --goal tests`
}

// memoryView is what memory --json prints.
type memoryView struct {
	Entries []state.Memory `json:"entries"`
	Digest  []goalDigest   `json:"digest"`
}

// goalDigest sums up a goal across memory entries. The iterations are
// nearest-rank percentiles of the iteration that first satisfied it, over
// the entries that did; null when none did.
type goalDigest struct {
	Goal        string  `json:"goal"`
	Runs        int     `json:"runs"`
	Satisfied   int     `json:"satisfied"`
	SuccessRate float64 `json:"success_rate"`
	Median      *int    `json:"median_iterations"`
	P90         *int    `json:"p90_iterations"`
}

func (c *memoryListCmd) Run(cl *cli, d *deps) error {
	var cfg *loop.Config
	if !c.All {
		var err error
		if cfg, err = cl.load(d); err != nil {
			return err
		}
		if _, ok := cfg.Goal(c.Goal); c.Goal != "" && !ok {
			return &usageError{fmt.Errorf("--goal %q: the config has no such goal", c.Goal)}
		}
	}
	entries, err := c.entries(cl, d, cfg)
	if err != nil {
		return err
	}
	v := memoryView{Entries: entries, Digest: digest(entries, cfg)}
	if c.JSON {
		return writeJSON(d, v)
	}
	return writeMemory(d, v)
}

// entries are the store's entries of cfg's loop (every loop's for a nil
// cfg), each holding only the goal asked for.
func (c *memoryListCmd) entries(cl *cli, d *deps, cfg *loop.Config) ([]state.Memory, error) {
	store, err := c.store(cl, d, workspace.Checkout{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	all, err := store.Memory(d.ctx)
	if err != nil {
		return nil, err
	}
	out := []state.Memory{}
	for _, m := range all {
		if cfg != nil && m.Loop != cfg.Name {
			continue
		}
		if c.Goal != "" {
			m.Goals = slices.DeleteFunc(slices.Clone(m.Goals), func(g state.GoalMemory) bool { return g.Goal != c.Goal })
			if len(m.Goals) == 0 {
				continue
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// digest sums up each goal across entries: the config's goals in its
// order (those in some entry), then any other goal by name.
func digest(entries []state.Memory, cfg *loop.Config) []goalDigest {
	by := map[string]*goalDigest{}
	firsts := map[string][]int{}
	for _, m := range entries {
		for _, g := range m.Goals {
			dg := by[g.Goal]
			if dg == nil {
				dg = &goalDigest{Goal: g.Goal}
				by[g.Goal] = dg
			}
			dg.Runs++
			if g.Satisfied {
				dg.Satisfied++
			}
			if g.SatisfiedAt >= 0 {
				firsts[g.Goal] = append(firsts[g.Goal], g.SatisfiedAt)
			}
		}
	}
	var order []string
	if cfg != nil {
		for _, g := range cfg.Goals {
			if by[g.Name] != nil {
				order = append(order, g.Name)
			}
		}
	}
	var rest []string
	for name := range by {
		if !slices.Contains(order, name) {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	out := []goalDigest{}
	for _, name := range append(order, rest...) {
		dg := by[name]
		dg.SuccessRate = float64(dg.Satisfied) / float64(dg.Runs)
		dg.Median, dg.P90 = percentile(firsts[name], 0.5), percentile(firsts[name], 0.9)
		out = append(out, *dg)
	}
	return out
}

// percentile is the nearest-rank percentile p of xs: the smallest x with
// at least p of xs at or below it; nil for none.
func percentile(xs []int, p float64) *int {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Sorted(slices.Values(xs))
	x := s[max(int(math.Ceil(p*float64(len(s))))-1, 0)]
	return &x
}

func writeMemory(d *deps, v memoryView) error {
	p := &printer{w: d.stdout}
	if len(v.Entries) == 0 {
		p.f("no memory entries\n")
		return p.err
	}
	for _, m := range v.Entries {
		p.f("%s  %s: %s after %d iterations, %s (ended %s)\n", m.ID(), m.Loop, m.Outcome, m.Iterations, spendLine(m.Spend), m.At.Format(time.RFC3339))
		for _, g := range m.Goals {
			at := "never satisfied"
			if g.SatisfiedAt >= 0 {
				at = fmt.Sprintf("first satisfied in iteration %d", g.SatisfiedAt)
			}
			end := "not satisfied at the end"
			if g.Satisfied {
				end = "satisfied at the end"
			}
			p.f("  %-12s %s, %s, %d flips\n", g.Goal, at, end, len(g.Flips))
		}
	}
	p.f("\ndigest:\n")
	for _, dg := range v.Digest {
		p.f("  %s\n", digestLine(dg))
	}
	return p.err
}

// digestLine says what memory shows of a goal, for memory and plan.
func digestLine(dg goalDigest) string {
	return fmt.Sprintf("%s: %d runs, %d satisfied (%.0f%%), median %s / p90 %s iterations", dg.Goal, dg.Runs, dg.Satisfied,
		100*dg.SuccessRate, iterationsOr(dg.Median), iterationsOr(dg.P90))
}

func iterationsOr(n *int) string {
	if n == nil {
		return "n/a"
	}
	return fmt.Sprint(*n)
}

type memoryForgetCmd struct {
	storeFlags `embed:""`
	IDs        []string `arg:"" optional:"" name:"id" help:"Entries to drop: RUN-ID@GENERATION, as loop-action memory lists them."`
	RunID      string   `name:"run-id" placeholder:"ID" help:"Drop every entry of this run."`
}

func (memoryForgetCmd) Help() string {
	return `Drops memory entries, so that no later run's builders see them. Each run
concerned is held while its entries are dropped (a run in use elsewhere is an
error), and nothing is dropped unless every entry named exists.

Example:
  loop-action memory forget 'calc/main@20261201T020000.000000000Z'
  loop-action memory forget --run-id calc/main`
}

func (c *memoryForgetCmd) Run(cl *cli, d *deps) error {
	if (len(c.IDs) == 0) == (c.RunID == "") {
		return &usageError{errors.New("memory forget: name entries, or --run-id, not both")}
	}
	byRun := map[string][]string{}
	for _, id := range c.IDs {
		run, gen, err := state.ParseMemoryID(id)
		if err != nil {
			return &usageError{err}
		}
		byRun[run] = append(byRun[run], gen)
	}
	if c.RunID != "" {
		if err := state.ValidRunID(c.RunID); err != nil {
			return &usageError{err}
		}
		byRun[c.RunID] = nil
	}
	store, err := c.store(cl, d, workspace.Checkout{})
	if err != nil {
		return err
	}
	defer store.Close()
	for run := range byRun {
		unlock, err := store.Lock(run)
		if errors.Is(err, state.ErrLocked) {
			return &usageError{err}
		}
		if err != nil {
			return err
		}
		defer unlock()
	}
	if err := c.resolve(d, store, byRun); err != nil {
		return err
	}
	for run, gens := range byRun {
		cp, err := store.Load(d.ctx, run)
		if err == nil {
			err = store.Save(d.ctx, cp, state.Commit{KeepWorkspace: true, Forget: gens})
		}
		if err != nil {
			return fmt.Errorf("forget the memory of run %q: %w", run, err)
		}
		fmt.Fprintf(d.stdout, "run %s: dropped %s\n", run, phrase.Plural(len(gens), "memory entry", "memory entries"))
	}
	return nil
}

// resolve checks, with the runs held, that every entry named exists, and
// names every entry of the run --run-id gives.
func (c *memoryForgetCmd) resolve(d *deps, store state.Store, byRun map[string][]string) error {
	all, err := store.Memory(d.ctx)
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, m := range all {
		held[m.ID()] = true
		if m.RunID == c.RunID {
			byRun[c.RunID] = append(byRun[c.RunID], m.Generation)
		}
	}
	for _, id := range c.IDs {
		if !held[id] {
			return &usageError{fmt.Errorf("memory forget: no entry %q; nothing was dropped", id)}
		}
	}
	if c.RunID != "" && len(byRun[c.RunID]) == 0 {
		return &usageError{fmt.Errorf("memory forget: run %q has no memory entries", c.RunID)}
	}
	return nil
}
