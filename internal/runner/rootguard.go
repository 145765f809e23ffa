package runner

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/workspace"
)

// maxRootEvents bounds the root_path_reverted events of one wave; the
// last one counts the rest.
const maxRootEvents = 100

// rootGuard holds the loop root as it was before a wave in which only
// isolated nodes run: they work in their worktrees (each with a
// repository of its own), so nothing but publish may change the root
// until the wave is over, its repository's HEAD, index, refs and object
// store included.
type rootGuard struct {
	root    string
	ctx     context.Context   // the guards' (run.guards)
	hasher  *workspace.Hasher // the run's, which snapshots the root
	objects *memory.Storage   // the root's content before waves of isolated nodes, the run's (run.objects)
	w       *watch            // records, and puts the refs back

	before workspace.Snapshot
	refs   guardState                   // the root repository's HEAD and refs (see refsKeep)
	objs   map[string]workspace.StatKey // the root's object store (see scanObjects)
	objErr error
	nodes  []string
	err    error // the root could not be stored before the wave
}

// guardRoot stores the loop root's content before a wave in which every
// node that runs is isolated, and returns nil for any other wave: when a
// node runs in the root itself, changes there cannot be told apart.
//
// The content goes into an object store in the runner's memory, out of
// every agent's reach; only what changed since the last wave is added.
// The repository's HEAD, index and refs are recorded as the guarded paths
// are, and its object store's files by lstat only.
func (r *iteration) guardRoot(runs []*nodeRun) *rootGuard {
	if r.run.iso == nil {
		return nil
	}
	g := &rootGuard{root: r.run.opts.Root, ctx: r.run.guards, hasher: r.run.hasher, w: r.w}
	for _, nr := range runs {
		if !nr.queued {
			continue
		}
		if !nr.node.Isolate {
			return nil
		}
		g.nodes = append(g.nodes, nr.node.Name)
	}
	if len(g.nodes) == 0 {
		return nil
	}
	if r.run.objects == nil {
		r.run.objects = memory.NewStorage()
	}
	g.objects = r.run.objects
	g.before, g.err = g.hasher.WriteObjects(g.ctx, g.objects)
	g.refs = scanRefs(g.ctx, g.root)
	g.objs, g.objErr = scanObjects(g.root)
	return g
}

// revert puts the loop root back as it was before the wave if anything
// changed it, and records every path it put back. It returns the paths,
// and why the root could not be put back, if it could not.
func (g *rootGuard) revert(it int) ([]string, string) {
	if g == nil {
		return nil, ""
	}
	refs, why := g.revertRefs(it)
	objs, whyObjs := g.revertObjects(it)
	paths, whyRoot := g.revertTree(it)
	paths = slices.Concat(refs, objs, paths)
	return paths, joinReasons(why, whyObjs, whyRoot)
}

// revertObjects removes what a wave of isolated nodes added to the root's
// object store (objects written through a worktree's .git turned into a
// link to the root's, say) and records it. A loose object or a pack whose
// stat changed but whose content still hashes to its name is no change:
// git freshened it (see intactObject). A file changed otherwise, or
// removed, cannot be put back (its content was not kept): that is
// recorded, and returned as why the root is not as it was.
func (g *rootGuard) revertObjects(it int) ([]string, string) {
	if g.objErr != nil {
		return nil, "the loop root's object store could not be listed before a wave of isolated nodes: " + g.objErr.Error()
	}
	now, err := scanObjects(g.root)
	if err != nil {
		return nil, "the loop root's object store could not be listed after a wave of isolated nodes: " + err.Error()
	}
	w, err := workspace.OpenWriter(g.root)
	if err != nil {
		return nil, err.Error()
	}
	defer w.Close()
	objects, err := workspace.OpenRoot(filepath.Join(g.root, ".git", "objects"))
	if err == nil {
		defer objects.Close()
	}
	var paths, failed []string
	all := maps.Clone(now)
	maps.Copy(all, g.objs)
	for _, rel := range slices.Sorted(maps.Keys(all)) {
		was, had := g.objs[rel]
		is, has := now[rel]
		what := ""
		switch {
		case !had && slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(rel, p+"/") }):
			continue // below a directory removed just now
		case !had:
			what = "created"
			if err := w.Remove(rel); err != nil {
				what, failed = what+"; removing it failed: "+err.Error(), append(failed, rel)
			}
		case !has:
			what, failed = "deleted; it cannot be put back", append(failed, rel)
		case was != is && intactObject(objects, rel):
			continue // freshened
		case was != is:
			what, failed = "modified; it cannot be put back", append(failed, rel)
		default:
			continue
		}
		paths = append(paths, rel)
		g.w.rec.Record(ledger.Event{Type: ledger.GitReverted, Iteration: it, Path: rel, Nodes: g.nodes, Reason: what})
	}
	if len(failed) > 0 {
		return paths, "the loop root's object store changed during a wave of isolated nodes and could not be put back: " + listed(failed)
	}
	return paths, ""
}

// revertRefs puts the root repository's HEAD and refs back as they were
// before the wave, recording each path as a .git path put back.
func (g *rootGuard) revertRefs(it int) ([]string, string) {
	if g.refs.err != nil {
		return nil, "the loop root's refs could not be read before a wave of isolated nodes: " + g.refs.err.Error()
	}
	now := scanRefs(g.ctx, g.root)
	if now.err != nil {
		return nil, "the loop root's refs could not be read after a wave of isolated nodes: " + now.err.Error()
	}
	rv := g.w.putBackChanged(it, g.nodes, g.refs, now, "")
	if len(rv.failed) > 0 {
		return rv.git, "the loop root's refs could not be put back: " + strings.Join(rv.failed, "; ")
	}
	return rv.git, ""
}

// revertTree puts the loop root's content back as it was before the wave.
func (g *rootGuard) revertTree(it int) ([]string, string) {
	ctx := g.ctx
	now, err := g.hasher.Snapshot(ctx)
	switch {
	case err != nil:
		return nil, "the loop root could not be read after a wave of isolated nodes: " + err.Error()
	case now == g.before:
		return nil, ""
	case g.err != nil:
		return nil, "the loop root changed during a wave of isolated nodes and could not be put back: " + g.err.Error()
	}
	changes, err := g.changes()
	if err != nil {
		return nil, "the loop root changed during a wave of isolated nodes: " + err.Error()
	}
	paths := g.record(it, changes)
	if _, err := workspace.Restore(ctx, g.root, g.objects, g.before); err != nil {
		return paths, "the loop root could not be put back after a wave of isolated nodes: " + err.Error()
	}
	if after, err := g.hasher.Snapshot(ctx); err != nil || after != g.before {
		return paths, fmt.Sprintf("the loop root is not as it was before the wave of isolated nodes (%s, want %s; %v)", after.Short(), g.before.Short(), err)
	}
	return paths, ""
}

// changes lists what differs between the root before the wave and now.
func (g *rootGuard) changes() (object.Changes, error) {
	now, err := g.hasher.WriteObjects(g.ctx, g.objects)
	if err != nil {
		return nil, err
	}
	a, err := object.GetTree(g.objects, plumbing.NewHash(string(g.before)))
	if err != nil {
		return nil, err
	}
	b, err := object.GetTree(g.objects, plumbing.NewHash(string(now)))
	if err != nil {
		return nil, err
	}
	return object.DiffTree(a, b)
}

// record writes one event per changed path (recordCapped).
func (g *rootGuard) record(it int, changes object.Changes) []string {
	var paths []string
	for i, c := range changes {
		p, kind := c.From.Name, "modified"
		switch {
		case c.From.Name == "":
			p, kind = c.To.Name, "created"
		case c.To.Name == "":
			kind = "deleted"
		}
		paths = append(paths, p)
		recordCapped(g.w.rec, i, len(changes), "changed",
			ledger.Event{Type: ledger.RootReverted, Iteration: it, Path: p, Nodes: g.nodes, Reason: kind})
	}
	return paths
}

// recordCapped records e, the event of the i-th of n paths, when i is
// below maxRootEvents; at maxRootEvents it records instead one that
// counts the rest (what says what happened to them).
func recordCapped(rec *ledger.Recorder, i, n int, what string, e ledger.Event) {
	switch {
	case i < maxRootEvents:
		rec.Record(e)
	case i == maxRootEvents:
		e.Path, e.Reason = fmt.Sprintf("(%d more)", n-i), what
		rec.Record(e)
	}
}

// listed names up to 5 paths and counts the rest.
func listed(paths []string) string {
	if len(paths) <= 5 {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:5], ", "), len(paths)-5)
}
