package isolate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// tree is one node's worktree and what the Manager knows of it.
type tree struct {
	node string
	dir  string            // absolute
	r    *os.Root          // for reading, and for removing what the node may not keep
	w    *workspace.Writer // for copying the root's files in
	base map[string]*entry
	// pending holds the paths the node may have changed since they last
	// matched their base: those whose stat the last walk found not to
	// vouch for it, and changes not yet published.
	pending map[string]struct{}
	git     bool // .git at the top is the node's repository (see checkout.go)
}

// entry is the base of one path.
type entry struct {
	st   state           // the root's content at the last seed or publish
	seen workspace.Stamp // the worktree file's stat when it last held st
	gone bool            // the node deleted the path, and that was reported
}

// close releases the worktree's handles.
func (t *tree) close() error {
	var errs []error
	if t.w != nil {
		errs = append(errs, t.w.Close())
	}
	if t.r != nil {
		errs = append(errs, t.r.Close())
	}
	return errors.Join(errs...)
}

func (t *tree) baseState(p string) state {
	if e := t.base[p]; e != nil {
		return e.st
	}
	return state{}
}

func (t *tree) setBase(p string, st state, key workspace.StatKey, at time.Time) {
	t.base[p] = &entry{st: st, seen: workspace.Stamp{Key: key, At: at}}
	delete(t.pending, p)
}

// untrack forgets p: it has no base, and nothing pending.
func (t *tree) untrack(p string) {
	delete(t.base, p)
	delete(t.pending, p)
}

// current returns what the worktree holds at p: absent for nothing, a
// directory or a special file, or a path below a symbolic link; oversized
// for a file larger than limit.
func (t *tree) current(ctx context.Context, p string, dirs *dirCheck, limit int64) (state, error) {
	fi, err := dirs.lstat(p)
	if err != nil || fi == nil {
		return state{}, err
	}
	if !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return state{}, nil
	}
	e := t.base[p]
	if e != nil && e.seen.Vouches(workspace.KeyOf(fi)) {
		return e.st, nil
	}
	at := time.Now()
	st, key, err := readState(ctx, t.r, p, fi, limit)
	if err != nil || st.kind == blocked {
		return state{}, err
	}
	if e != nil && st == e.st {
		e.seen = workspace.Stamp{Key: key, At: at}
	}
	return st, nil
}

// changed returns what the worktree holds at p and whether that is a
// change of the node's: a deletion already reported stays one.
func (t *tree) changed(ctx context.Context, p string, dirs *dirCheck, limit int64) (state, bool, error) {
	e := t.base[p]
	if _, ok := t.pending[p]; !ok {
		if e != nil && e.gone {
			return state{}, true, nil
		}
		return t.baseState(p), false, nil
	}
	cur, err := t.current(ctx, p, dirs, limit)
	if err != nil {
		return state{}, false, err
	}
	if cur == t.baseState(p) {
		delete(t.pending, p)
		if e != nil {
			e.gone = false
		}
		return cur, false, nil
	}
	return cur, true, nil
}

// walk marks pending every path of the worktree whose stat does not vouch
// for its base, every base path missing from it, and excluded entries.
func (t *tree) walk(ctx context.Context) error {
	seen := make(map[string]bool, len(t.base))
	err := filepath.WalkDir(t.dir, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			if abs == t.dir {
				return err
			}
			return nil // vanished, or unreadable: not a path of the tree
		}
		rel, _ := filepath.Rel(t.dir, abs)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return ctx.Err()
		}
		return t.visit(rel, d, seen)
	})
	for p := range t.base {
		if !seen[p] {
			t.pending[p] = struct{}{}
		}
	}
	return err
}

func (t *tree) visit(rel string, d fs.DirEntry, seen map[string]bool) error {
	if top, _ := excludedTop(rel); top != "" {
		t.pending[rel] = struct{}{}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	if d.IsDir() && (len(rel) > workspace.MaxPathBytes || strings.Count(rel, "/") >= workspace.MaxDepth) {
		return fmt.Errorf("walk the worktree: %q: %w", rel[:min(len(rel), 200)]+"…", workspace.ErrTooDeep)
	}
	if d.IsDir() || (!d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0) {
		return nil
	}
	seen[rel] = true
	e := t.base[rel]
	fi, err := d.Info()
	if e == nil || err != nil || !e.seen.Vouches(workspace.KeyOf(fi)) {
		t.pending[rel] = struct{}{}
	}
	return nil
}
