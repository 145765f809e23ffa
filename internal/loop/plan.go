package loop

import (
	"fmt"
	"slices"
	"strings"
)

// Waves returns the nodes grouped in waves: a node runs in the wave after
// the latest of the nodes it runs after. Within a wave, nodes keep config
// order. A valid config has no cycles, so every node is placed.
func (c *Config) Waves() [][]Node { return byLayer(c.Nodes, nodeGraph(c.Nodes).layers()) }

// StageOrder returns the stages in the order they open: a stage opens once
// every stage it comes after has closed. Stages in one step open together.
func (c *Config) StageOrder() [][]Stage { return byLayer(c.Stages, stageGraph(c.Stages).layers()) }

// byLayer groups items by layers of their indexes.
func byLayer[T any](items []T, layers [][]int) [][]T {
	var out [][]T
	for _, layer := range layers {
		group := make([]T, len(layer))
		for k, i := range layer {
			group[k] = items[i]
		}
		out = append(out, group)
	}
	return out
}

// Goal returns the goal with the given name.
func (c *Config) Goal(name string) (Goal, bool) {
	if i := indexOf(c.Goals, name); i >= 0 {
		return c.Goals[i], true
	}
	return Goal{}, false
}

// Node returns the node with the given name.
func (c *Config) Node(name string) (Node, bool) {
	if i := indexOf(c.Nodes, name); i >= 0 {
		return c.Nodes[i], true
	}
	return Node{}, false
}

// Builders returns the builder nodes that advance the goal.
func (c *Config) Builders(goal string) []Node {
	var out []Node
	for _, n := range c.Nodes {
		if n.Role == RoleBuilder && slices.Contains(n.Goals, goal) {
			out = append(out, n)
		}
	}
	return out
}

// StageGoals returns the goals whose satisfaction closes the stage: its
// goals key, or else the goals of its builders.
func (c *Config) StageGoals(stage string) []string {
	if i := indexOf(c.Stages, stage); i >= 0 && len(c.Stages[i].Goals) > 0 {
		return c.Stages[i].Goals
	}
	var out []string
	for _, n := range c.Nodes {
		if n.Stage == stage && n.Role == RoleBuilder {
			for _, g := range n.Goals {
				if !slices.Contains(out, g) {
					out = append(out, g)
				}
			}
		}
	}
	return out
}

// Argv returns the provider's command for a tier: the tier's arguments,
// then the provider's args, replace a {tier} element, or are appended when
// there is none. The
// {prompt} and {prompt_file} placeholders are left for the caller. An
// openai provider has no command: its Argv names what it calls instead,
// "openai", the base URL and the tier's model.
func (p Provider) Argv(tier string) []string {
	if p.Type == "openai" {
		return []string{"openai", p.BaseURL, p.ModelFor(tier)}
	}
	extra := append(slices.Clone(p.Tiers[tier]), p.Args...)
	out := make([]string, 0, len(p.Command)+len(extra))
	spliced := false
	for _, a := range p.Command {
		if a == "{tier}" {
			out = append(out, extra...)
			spliced = true
			continue
		}
		out = append(out, a)
	}
	if !spliced {
		out = append(out, extra...)
	}
	return out
}

// CostCeiling is the most a run can spend as far as the config can tell.
type CostCeiling struct {
	USD   float64 // valid when Known
	Known bool
	Basis string // how the figure was reached, or why it is unknown
}

// CostCeiling works out the worst-case spend of a run from its budgets and
// the prices of the providers its nodes use.
func (c *Config) CostCeiling() CostCeiling {
	var out CostCeiling
	if c.Stop.MaxCostUSD > 0 {
		out = CostCeiling{USD: c.Stop.MaxCostUSD, Known: true, Basis: "stop.max_cost_usd"}
	}
	if c.Stop.MaxTokens > 0 {
		rate, why := c.highestPrice()
		switch {
		case why != "" && !out.Known:
			out.Basis = why
		case why == "":
			usd := float64(c.Stop.MaxTokens) * rate / 1e6
			if !out.Known || usd < out.USD {
				out = CostCeiling{USD: usd, Known: true, Basis: fmt.Sprintf("stop.max_tokens × $%g per million tokens, the highest price", rate)}
			}
		}
	}
	if !out.Known && out.Basis == "" {
		out.Basis = "no stop.max_cost_usd, and no stop.max_tokens with provider prices"
	}
	if out.Known {
		out.Basis += "; nodes already running when a budget is spent may finish past it"
	}
	return out
}

// highestPrice returns the highest per-million-token price among the
// providers nodes use, or why it is unknown.
func (c *Config) highestPrice() (float64, string) {
	var rate float64
	var missing []string
	for _, n := range c.Nodes {
		p, ok := c.Providers[n.Provider]
		if !ok || p.Price == nil {
			if !slices.Contains(missing, n.Provider) {
				missing = append(missing, n.Provider)
			}
			continue
		}
		rate = max(rate, p.Price.Input, p.Price.Output)
	}
	if len(missing) > 0 {
		return 0, fmt.Sprintf("provider %s has no price", strings.Join(missing, ", "))
	}
	return rate, ""
}

// CheckEnv reports each environment variable a provider requires that
// lookup does not find or finds empty, with the given severity: a warning
// for validate, an error before a run. The variables a preset lists only to
// mask them (Provider.OptionalEnv) are not required.
func (c *Config) CheckEnv(lookup func(string) (string, bool), sev Severity) Diagnostics {
	var ds Diagnostics
	for name, p := range c.Providers {
		for _, e := range p.RequiredEnv() {
			if v, ok := lookup(e); !ok || v == "" {
				at := []string{providerPath(name, "env"), providerPath(name)}
				if e == p.APIKeyEnv {
					at = append([]string{providerPath(name, "api_key_env")}, at...)
				}
				ds = append(ds, Diagnostic{Pos: c.pos(at...), Severity: sev,
					Message: fmt.Sprintf("provider %q needs the environment variable %s, which is not set", name, e)})
			}
		}
	}
	ds.sort()
	return ds
}
