package isolate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// change is a path a node changed: cur is what its worktree holds.
type change struct {
	path string
	cur  state
}

// publisher publishes one node's changes.
type publisher struct {
	ctx   context.Context
	m     *Manager
	t     *tree
	rep   *Report
	wdirs *dirCheck // the worktree's
	rdirs *dirCheck // the root's
}

// publish publishes what t's node changed, in path order.
func (m *Manager) publish(ctx context.Context, t *tree, rep *Report) error {
	if err := t.walk(ctx); err != nil {
		return err
	}
	p := &publisher{ctx: ctx, m: m, t: t, rep: rep, wdirs: newDirCheck(t.r), rdirs: newDirCheck(m.index.r)}
	refused := len(rep.Refused)
	defer p.sortRefusals(refused)
	paths, err := p.refuseExcluded(sortedKeys(t.pending))
	if err != nil {
		return err
	}
	changes, err := p.collect(paths)
	if err != nil {
		return err
	}
	ok, err := m.included(t, p.toFilter(changes))
	if err != nil {
		return fmt.Errorf("apply ignore rules: %w", err)
	}
	for _, c := range changes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if allowed, asked := ok[c.path]; asked && !allowed {
			t.untrack(c.path) // ignored: neither seeded nor published from now on
			continue
		}
		if err := p.one(c); err != nil {
			return fmt.Errorf("publish %q: %w", c.path, err)
		}
	}
	return nil
}

// sortRefusals puts the node's refusals, from rep.Refused[from:], in path
// order: those of .git and .loop are found first.
func (p *publisher) sortRefusals(from int) {
	slices.SortStableFunc(p.rep.Refused[from:], func(a, b Refusal) int { return strings.Compare(a.Path, b.Path) })
}

// refuseExcluded refuses and deletes from the worktree what lies in .git
// or .loop, and returns the other paths. The node's own repository, .git
// at the top of a worktree that has one, is left alone.
func (p *publisher) refuseExcluded(paths []string) ([]string, error) {
	rest := paths[:0:0]
	done := map[string]bool{}
	for _, q := range paths {
		top, reason := excludedTop(q)
		if top == "" {
			rest = append(rest, q)
			continue
		}
		delete(p.t.pending, q)
		if top == ".git" && p.t.git {
			continue // the node's own repository: never published, no refusal
		}
		if done[top] {
			continue
		}
		done[top] = true
		fi, err := p.wdirs.lstat(top)
		if err != nil {
			return nil, err
		}
		if fi == nil {
			continue // already gone
		}
		p.rep.Refused = append(p.rep.Refused, Refusal{Node: p.t.node, Path: top, Reason: reason})
		if err := p.t.r.RemoveAll(top); err != nil {
			return nil, fmt.Errorf("remove %q from the worktree: %w", top, err)
		}
	}
	return rest, nil
}

// collect returns the changes among paths; deletions are reported (once)
// instead.
func (p *publisher) collect(paths []string) ([]change, error) {
	var out []change
	for _, q := range paths {
		cur, changed, err := p.t.changed(p.ctx, q, p.wdirs, p.m.limit())
		if err != nil {
			return nil, err
		}
		if !changed {
			continue
		}
		if cur.present() {
			out = append(out, change{path: q, cur: cur})
			continue
		}
		delete(p.t.pending, q)
		if e := p.t.base[q]; e != nil && !e.gone {
			e.gone = true
			p.rep.Deletions = append(p.rep.Deletions, Change{Node: p.t.node, Path: q, Kind: Deleted})
		}
	}
	return out, nil
}

// toFilter returns the changed paths whose ignore status must be asked:
// new paths, or all of them when ignore rules changed.
func (p *publisher) toFilter(changes []change) []string {
	all := p.m.rulesMod
	for _, c := range changes {
		all = all || path.Base(c.path) == ".gitignore"
	}
	var out []string
	for _, c := range changes {
		if all || p.t.base[c.path] == nil {
			out = append(out, c.path)
		}
	}
	return out
}

// one publishes the change c, or reports why not.
func (p *publisher) one(c change) error {
	if c.cur.kind == oversized {
		return p.refuse(c.path, ReasonTooLarge)
	}
	if reason, err := p.m.refusal(p.t, c); reason != "" || err != nil {
		if err != nil {
			return err
		}
		return p.refuse(c.path, reason)
	}
	rs, err := p.m.index.state(p.ctx, c.path, p.rdirs)
	switch {
	case err != nil:
		return err
	case rs.kind == blocked:
		return p.refuse(c.path, ReasonUnreachable)
	case rs == c.cur: // the root already holds it
		p.t.setBase(c.path, rs, workspace.StatKey{}, p.m.now())
		return nil
	case rs != p.t.baseState(c.path): // someone else changed the root first
		winner := LoopRoot
		if w, ok := p.m.writers[c.path]; ok && w.st == rs {
			winner = w.node
		}
		p.rep.Conflicts = append(p.rep.Conflicts, Conflict{Path: c.path, Winner: winner, Loser: p.t.node})
		return nil
	}
	return p.write(c)
}

// write copies the worktree's version of c.path into the root, through
// the root's writer: should a parent have become a symbolic link or a
// file since it was checked, nothing is written, and the change is
// refused as unreachable.
func (p *publisher) write(c change) error {
	fi, err := p.wdirs.lstat(c.path)
	if err != nil || fi == nil {
		return cmp.Or(err, errors.New("vanished from the worktree"))
	}
	at := p.m.now()
	cp, err := p.m.index.w.Copy(p.ctx, c.path, p.t.r, fi)
	if errors.Is(err, workspace.ErrParent) {
		p.rdirs.forget(strings.SplitN(c.path, "/", 2)[0])
		return p.refuse(c.path, ReasonUnreachable)
	}
	if err != nil {
		return err
	}
	p.rdirs.made(parent(c.path))
	st := copiedState(cp)
	kind := changeKind(p.t.baseState(c.path), st)
	p.t.setBase(c.path, st, cp.Src, at)
	p.m.index.record(c.path, st, cp.Dst, at)
	p.m.writers[c.path] = written{node: p.t.node, st: st}
	p.m.rulesMod = p.m.rulesMod || path.Base(c.path) == ".gitignore"
	p.rep.Published = append(p.rep.Published, Change{Node: p.t.node, Path: c.path, Kind: kind})
	return nil
}

// refuse reports the change of q as refused for reason and gives the
// worktree the root's version of q back, so that the same change is not
// refused again and again.
func (p *publisher) refuse(q, reason string) error {
	p.rep.Refused = append(p.rep.Refused, Refusal{Node: p.t.node, Path: q, Reason: reason})
	err := p.m.adopt(p.ctx, p.t, q, p.wdirs)
	if err != nil {
		return fmt.Errorf("restore %q in the worktree: %w", q, err)
	}
	return nil
}
