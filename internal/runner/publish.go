package runner

import (
	"context"
	"path/filepath"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner/isolate"
)

// isolation returns the manager of the run's worktrees, or nil when no
// node is isolated.
func isolation(cfg *loop.Config, root string) *isolate.Manager {
	for _, n := range cfg.Nodes {
		if n.Isolate {
			protected := guarded{patterns: protectedPatterns(cfg, root)}.protected
			return isolate.New(root, isolate.Options{Protected: protected, MaxFileSize: cfg.Run.MaxFileSize.Bytes})
		}
	}
	return nil
}

// worktree prepares an isolated node's worktree before it runs: seeded with
// the loop root as it is now, never overwriting the node's own work.
func (r *iteration) worktree(ctx context.Context, nr *nodeRun) error {
	if !nr.node.Isolate || r.run.iso == nil {
		return nil
	}
	dir, err := r.run.iso.Prepare(ctx, nr.node.Name)
	nr.dir = dir
	return err
}

// agentEnv is the environment of a node's agent. An isolated node's
// worktree lies inside the loop root, so git there must not find the
// root's repository.
func (r *iteration) agentEnv(nr *nodeRun) []string {
	env := WithoutAPIKeys(r.cfg, r.run.opts.Env)
	if nr.dir == "" {
		return env
	}
	return environ.Env(env).With("GIT_CEILING_DIRECTORIES", filepath.Dir(nr.dir))
}

// publish copies what the wave's isolated nodes changed into the loop
// root, in wave order, and records every publication, conflict, refusal
// and unpropagated deletion. Refusals count as one node failure.
func (r *iteration) publish(ctx context.Context, runs []*nodeRun) []string {
	if r.run.iso == nil {
		return nil
	}
	var names []string
	for _, nr := range runs {
		if nr.queued && nr.skip == "" && nr.dir != "" {
			names = append(names, nr.node.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	rep, err := r.run.iso.Publish(ctx, names)
	if err != nil {
		r.run.logf("publish %v: %v", names, err)
	}
	var published []string
	for _, c := range rep.Published {
		r.rec.Record(ledger.Event{Type: ledger.Published, Iteration: r.n, Node: c.Node, Path: c.Path, Kind: c.Kind})
		published = append(published, c.Path)
	}
	for _, c := range rep.Conflicts {
		r.rec.Record(ledger.Event{Type: ledger.PublishConflict, Iteration: r.n, Node: c.Loser, Winner: c.Winner, Path: c.Path})
	}
	for _, c := range rep.Refused {
		r.rec.Record(ledger.Event{Type: ledger.PublishRefused, Iteration: r.n, Node: c.Node, Path: c.Path, Reason: c.Reason})
	}
	for _, c := range rep.Deletions {
		r.rec.Record(ledger.Event{Type: ledger.DeletionKept, Iteration: r.n, Node: c.Node, Path: c.Path})
	}
	if len(rep.Refused) > 0 {
		r.nodeFailed("changes refused at publish (see publish_refused)")
	}
	return published
}
