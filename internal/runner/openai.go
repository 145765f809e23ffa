package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

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
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !keys[name] {
			out = append(out, kv)
		}
	}
	return out
}

// isOpenAI reports whether a node's provider is of type "openai".
func (r *run) isOpenAI(n loop.Node) bool {
	return r.cfg.Providers[n.Provider].Type == "openai"
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
	if nr.resp.Err != nil || nr.node.Role != loop.RoleBuilder || !r.isOpenAI(nr.node) {
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
	g := r.guarded()
	refuse := func(rel string) string {
		if g.protected(rel) {
			return "it is protected"
		}
		return ""
	}
	r.edits.Lock() // two nodes in one root check and write one after the other
	defer r.edits.Unlock()
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
		if nr.queued && nr.skip == "" && r.isOpenAI(nr.node) && nr.node.Role == loop.RoleBuilder {
			if r.refusals == nil {
				r.refusals = map[string]string{}
			}
			r.refusals[nr.node.Name] = nr.refused
		}
	}
}

// lastEdits tells an openai builder why its last reply's edits were not
// applied: it cannot see the workspace, so this is how it learns.
func (r *run) lastEdits(b *strings.Builder, n loop.Node) {
	why := r.refusals[n.Name]
	if why == "" {
		return
	}
	if r.mask != nil {
		why = r.mask(why)
	}
	fmt.Fprintf(b, "## Your last reply's edits\n\nNothing of your last reply was applied: %s\n\n", why)
}

// contextFiles writes the contents of the [context] files into an openai
// node's prompt, up to ContextCap bytes in all, and says what the cap left
// out. Files are read through workspace.Writer: never through a symbolic
// link, never from .git or .loop.
func (r *run) contextFiles(b *strings.Builder) {
	pats := r.cfg.Context.Files
	if len(pats) == 0 {
		return
	}
	names, err := r.hasher.Files(r.walkContext())
	if err != nil {
		r.logf("context files: %v", err)
		return
	}
	w, err := workspace.OpenWriter(r.opts.Root)
	if err != nil {
		r.logf("context files: %v", err)
		return
	}
	defer w.Close()
	var shown, left []string
	used := 0
	var body strings.Builder
	for _, name := range matching(names, pats) {
		e, ok, err := w.Lookup(name)
		if err != nil || !ok || !e.Mode.IsRegular() || e.Data == nil {
			continue
		}
		if used+len(e.Data) > ContextCap {
			left = append(left, name)
			continue
		}
		used += len(e.Data)
		shown = append(shown, name)
		fmt.Fprintf(&body, "%s\n````\n%s\n````\n\n", name, strings.TrimSuffix(string(e.Data), "\n"))
	}
	fmt.Fprintf(b, "## Context files\n\n%d files, %d bytes (at most %d bytes are shown).\n\n", len(shown), used, ContextCap)
	b.WriteString(body.String())
	if len(left) > 0 {
		fmt.Fprintf(b, "Not shown, past the cap: %s\n\n", strings.Join(left, ", "))
		r.logf("context files past the cap of %d bytes, not shown: %s", ContextCap, strings.Join(left, ", "))
	}
}

// matching are the names that match any of the patterns, in order.
func matching(names, pats []string) []string {
	var out []string
	for _, n := range names {
		for _, p := range pats {
			if ok, _ := doublestar.Match(p, n); ok {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
