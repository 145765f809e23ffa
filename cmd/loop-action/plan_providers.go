package main

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
)

// plannedProvider is how plan shows a provider: its command as the config
// expands it (a preset's included), with the placeholders the runner fills
// in, and the names of its variables, never their values.
type plannedProvider struct {
	Name        string              `json:"name"`
	Preset      string              `json:"preset,omitempty"`
	Type        string              `json:"type"`
	Command     []string            `json:"command"`
	Prompt      string              `json:"prompt"`
	Usage       string              `json:"usage"`
	Env         []string            `json:"env,omitempty"`
	OptionalEnv []string            `json:"optional_env,omitempty"`
	Tiers       map[string][]string `json:"tiers,omitempty"`
}

// plannedProviders lists the config's providers by name.
func plannedProviders(cfg *loop.Config) []plannedProvider {
	out := make([]plannedProvider, 0, len(cfg.Providers))
	for _, n := range slices.Sorted(maps.Keys(cfg.Providers)) {
		p := cfg.Providers[n]
		pp := plannedProvider{Name: n, Preset: p.Preset, Type: p.Type, Command: p.Command, Prompt: p.Prompt,
			Usage: p.Usage, Tiers: p.Tiers}
		pp.Env = p.RequiredEnv()
		for _, e := range p.Env {
			if !slices.Contains(pp.Env, e) {
				pp.OptionalEnv = append(pp.OptionalEnv, e)
			}
		}
		out = append(out, pp)
	}
	return out
}

// writeProviders prints the providers section of plan.
func (v planView) writeProviders(p *printer) {
	if len(v.Providers) == 0 {
		return
	}
	p.f("\nproviders:\n")
	for _, pp := range v.Providers {
		preset := ""
		if pp.Preset != "" {
			preset = " (preset " + pp.Preset + ")"
		}
		p.f("  %s%s: %s\n", pp.Name, preset, quoteTemplate(pp.Command))
		p.f("       %s\n", providerDetails(pp))
		if len(pp.Env) > 0 {
			p.f("       env (required, masked): %s\n", strings.Join(pp.Env, ", "))
		}
		if len(pp.OptionalEnv) > 0 {
			p.f("       env (masked, not required): %s\n", strings.Join(pp.OptionalEnv, ", "))
		}
	}
}

// providerDetails says how the prompt goes in, how usage comes out, and
// what each tier adds.
func providerDetails(pp plannedProvider) string {
	parts := []string{"prompt " + promptPhrase(pp.Prompt), "usage " + pp.Usage}
	for _, t := range loop.TierLadder {
		if args, ok := pp.Tiers[t]; ok {
			parts = append(parts, t+" tier: "+cmp.Or(quoteTemplate(args), "(nothing)"))
		}
	}
	return strings.Join(parts, "; ")
}

func promptPhrase(mode string) string {
	switch mode {
	case "arg":
		return "as {prompt}"
	case "file":
		return "in {prompt_file}"
	}
	return "on stdin"
}

// quoteTemplate quotes an argv template for a shell, leaving the
// placeholders that are whole arguments as they are.
func quoteTemplate(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		switch a {
		case "{tier}", "{prompt}", "{prompt_file}":
			words[i] = a
		default:
			words[i] = process.Quote([]string{a})
		}
	}
	return strings.Join(words, " ")
}
