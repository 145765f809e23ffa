package isolate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/loop-action/loop-action/internal/workspace"
)

// create makes the worktree of node afresh (a stale one from an earlier
// run is deleted) as a copy of the files of the root's snapshot.
func (m *Manager) create(ctx context.Context, node string) (*tree, error) {
	dir := filepath.Join(m.worktrees(), node)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	t := &tree{node: node, dir: dir, base: map[string]*entry{}, pending: map[string]struct{}{}}
	var err error
	if t.r, err = workspace.OpenRoot(dir); err != nil {
		return nil, err
	}
	if t.w, err = workspace.OpenWriter(dir); err == nil {
		err = m.seedAll(ctx, t)
	}
	if err == nil {
		err = m.checkout(t)
	}
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// seedAll copies every file of the root's snapshot into t's empty worktree.
func (m *Manager) seedAll(ctx context.Context, t *tree) error {
	files, err := workspace.NewHasher(m.root).Files(ctx)
	if err != nil {
		return err
	}
	at := m.now()
	res, err := copyAll(ctx, m.index.r, t.r, files, m.limit())
	if err != nil {
		return err
	}
	for _, s := range res {
		if s.path != "" {
			st := copiedState(s.Copied)
			t.setBase(s.path, st, s.Dst, at)
			m.index.record(s.path, st, s.Src, at)
		}
	}
	return nil
}

// reseed brings t's worktree up to date with the root: every path whose
// root content differs from its base gets the root's version (or is
// deleted) unless the node changed it too, in which case the node's
// version is kept; the base then follows only if both now agree.
func (m *Manager) reseed(ctx context.Context, t *tree) error {
	if err := t.walk(ctx); err != nil {
		return err
	}
	inRoot, err := m.index.scan(ctx)
	if err != nil {
		return err
	}
	dirs, rdirs := newDirCheck(t.r), newDirCheck(m.index.r)
	for p := range t.base { // deletions first: a file may become a directory
		if _, ok := inRoot[p]; ok {
			continue
		}
		fi, err := rdirs.lstat(p)
		if err != nil {
			return err
		}
		if fi != nil && (fi.Mode().IsRegular() || fi.Mode().Type() == os.ModeSymlink) {
			t.untrack(p) // ignored now, but still there: neither seeded nor deleted
			continue
		}
		if err := m.reseedPath(ctx, t, p, state{}, dirs); err != nil {
			return err
		}
	}
	files, err := sortedKeys(inRoot), ctx.Err()
	for _, p := range files {
		if err == nil {
			err = m.reseedPath(ctx, t, p, inRoot[p], dirs)
		}
	}
	if err == nil {
		err = m.checkout(t)
	}
	return err
}

// reseedPath brings p up to date with rs, the root's state of it.
func (m *Manager) reseedPath(ctx context.Context, t *tree, p string, rs state, dirs *dirCheck) error {
	if t.baseState(p) == rs {
		return nil
	}
	cur, changed, err := t.changed(ctx, p, dirs, m.limit())
	if err == nil && !changed { // make sure: the node's work is never overwritten
		cur, err = t.current(ctx, p, dirs, m.limit())
		changed = cur != t.baseState(p)
	}
	if err != nil {
		return err
	}
	if !changed {
		err = m.adopt(ctx, t, p, dirs)
		if inTheWay(err) {
			return nil // something of the node's is in the way: the base stays
		}
		return err
	}
	if cur == rs { // both made the same change
		if rs.present() {
			t.setBase(p, rs, workspace.StatKey{}, m.now())
		} else {
			t.untrack(p)
		}
	}
	return nil
}

// adopt gives the worktree the root's current version of p (deleting p
// if the root has none) and makes it p's base.
func (m *Manager) adopt(ctx context.Context, t *tree, p string, dirs *dirCheck) error {
	fi, err := newDirCheck(m.index.r).lstat(p)
	if err != nil {
		return err
	}
	if fi == nil || !(fi.Mode().IsRegular() || fi.Mode().Type() == os.ModeSymlink) {
		t.untrack(p)
		return removeFile(t.r, p, dirs)
	}
	if fi.Mode().IsRegular() && fi.Size() > m.limit() {
		return workspace.CheckFileSize(p, fi.Size(), m.limit())
	}
	at := m.now()
	c, err := t.w.Copy(ctx, p, m.index.r, fi)
	if err != nil {
		return fmt.Errorf("copy %q into the worktree: %w", p, err)
	}
	dirs.made(parent(p))
	st := copiedState(c)
	t.setBase(p, st, c.Dst, at)
	m.index.record(p, st, c.Src, at)
	return nil
}

// removeFile deletes the file or link p from the worktree, if it is there,
// and then its parent directories that are left empty.
func removeFile(r *os.Root, p string, dirs *dirCheck) error {
	fi, err := dirs.lstat(p)
	if err != nil || fi == nil || fi.IsDir() {
		return err
	}
	if err := r.Remove(p); err != nil && !missing(err) {
		return err
	}
	for dir := parent(p); dir != "" && r.Remove(dir) == nil; dir = parent(dir) {
		dirs.forget(dir)
	}
	return nil
}

// inTheWay reports whether err says that something in the worktree (a
// non-empty directory, or a file where a directory is needed) kept a copy
// from being written.
func inTheWay(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) ||
		errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, workspace.ErrParent)
}
