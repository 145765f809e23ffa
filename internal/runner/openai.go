package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner/edit"
	"github.com/loop-action/loop-action/internal/runner/provider"
	"github.com/loop-action/loop-action/internal/runner/provider/openai"
	"github.com/loop-action/loop-action/internal/workspace"
)

// ContextCap is the most bytes of [context] files an openai node's prompt
// carries; the files past it are named, not shown.
const ContextCap = 256 << 10

// newProvider is the provider of a config entry.
func newProvider(name string, p loop.Provider) Provider {
	if p.Type == "openai" {
		return openai.Client{Name: name, Spec: p}
	}
	return provider.Command{Name: name, Spec: p}
}

// WithoutAPIKeys is env without the variables that openai providers name
// in api_key_env: only the runner's own requests use those keys, so
// agents and checks (which run what models wrote) never get them. A
// variable a command provider lists in its env stays: its agent needs it.
func WithoutAPIKeys(cfg *loop.Config, env []string) []string {
	keys := map[string]bool{}
	for _, p := range cfg.Providers {
		if p.Type == "openai" && p.APIKeyEnv != "" {
			keys[p.APIKeyEnv] = true
		}
	}
	for _, p := range cfg.Providers {
		if p.Type != "openai" {
			for _, e := range p.Env {
				delete(keys, e)
			}
		}
	}
	if len(keys) == 0 {
		return env
	}
	return environ.Env(env).WithoutFunc(func(name string) bool { return keys[name] })
}

// isOpenAI reports whether a node's provider is of type "openai".
func isOpenAI(cfg *loop.Config, n loop.Node) bool {
	return cfg.Providers[n.Provider].Type == "openai"
}

// dispatchTo calls a node's provider: a judge of an openai provider is
// asked for its verdict in JSON mode.
func dispatchTo(ctx context.Context, p Provider, n loop.Node, req provider.Request) provider.Response {
	if c, ok := p.(openai.Client); ok && n.Role == loop.RoleJudge {
		return c.Judge(ctx, req)
	}
	return p.Dispatch(ctx, req)
}

// applyEdits applies the SEARCH/REPLACE blocks of an openai builder's
// reply in its root (the loop root or its worktree), whole or not at all.
// A reply that does not parse, or any block refused or not matching, is
// the node's failure, with every problem in its error; nothing is written
// then.
func (r *iteration) applyEdits(nr *nodeRun, reply, root string) {
	if nr.resp.Err != nil || nr.node.Role != loop.RoleBuilder || !isOpenAI(r.cfg, nr.node) {
		return
	}
	blocks, err := edit.Parse(reply)
	if err != nil {
		nr.refused = "its reply's edits cannot be read, none applied: " + err.Error()
		nr.resp.Err = fmt.Errorf("node %s: %s", nr.node.Name, nr.refused)
		return
	}
	w, err := workspace.OpenWriter(root)
	if err != nil {
		nr.resp.Err = fmt.Errorf("node %s: apply its edits: %w", nr.node.Name, err)
		return
	}
	defer w.Close()
	g := r.w.guarded
	refuse := func(rel string) string {
		if g.protected(rel) {
			return "it is protected"
		}
		return ""
	}
	r.run.edits.Lock() // two nodes in one root check and write one after the other
	defer r.run.edits.Unlock()
	written, err := edit.Apply(w, blocks, edit.Options{Refuse: refuse})
	if err != nil {
		nr.refused = fmt.Sprintf("none of its %d edits applied: %s", len(blocks), strings.ReplaceAll(err.Error(), "\n", "; "))
		nr.resp.Err = fmt.Errorf("node %s: %s", nr.node.Name, nr.refused)
		return
	}
	nr.edited = written
}

// noteEdits keeps, after a wave, why each openai builder's edits were not
// applied, for its next prompt; a builder whose edits applied is cleared.
func (r *iteration) noteEdits(runs []*nodeRun) {
	for _, nr := range runs {
		if nr.queued && nr.skip == "" && isOpenAI(r.cfg, nr.node) && nr.node.Role == loop.RoleBuilder {
			if r.run.refusals == nil {
				r.run.refusals = map[string]string{}
			}
			r.run.refusals[nr.node.Name] = nr.refused
		}
	}
}

// matching are the names that match any of the patterns, in order.
func matching(names, pats []string) []string {
	var out []string
	for _, n := range names {
		if matchesAny(pats, n) {
			out = append(out, n)
		}
	}
	return out
}
