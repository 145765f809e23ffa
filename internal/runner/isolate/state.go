package isolate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/loop-action/loop-action/internal/workspace"
)

// kind is what a path holds, as far as a snapshot is concerned.
type kind uint8

const (
	absent     kind = iota // nothing (or, in a worktree, a directory or special file)
	regular                // a regular file without the owner execute bit
	executable             // a regular file with the owner execute bit
	symlink                // a symbolic link; its id is that of its target text
	blocked                // root only: a directory, special file, or beyond a non-directory
	oversized              // a regular file larger than the Manager's limit: never read, so no id
)

// state is the content of one path: its kind and, unless absent or
// blocked, its git blob id.
type state struct {
	kind kind
	id   workspace.ObjectID
}

func (s state) present() bool { return s.kind != absent && s.kind != blocked }

// changeKind names the change from state a to b (b present).
func changeKind(a, b state) string {
	switch {
	case !a.present():
		return Created
	case a.id == b.id && a.kind != symlink && b.kind != symlink:
		return Mode
	}
	return Modified
}

func fileKind(m fs.FileMode) kind {
	if m&0o100 != 0 {
		return executable
	}
	return regular
}

// copiedState is the state of what a copy copied.
func copiedState(c workspace.Copied) state {
	if c.Mode&fs.ModeSymlink != 0 {
		return state{kind: symlink, id: c.ID}
	}
	return state{kind: fileKind(c.Mode), id: c.ID}
}

// readState returns the state of name in r, whose lstat result is fi, and
// the stat key of what was read. It does not look at name's parents. A
// regular file larger than limit is oversized, and not read.
func readState(ctx context.Context, r *os.Root, name string, fi fs.FileInfo, limit int64) (state, workspace.StatKey, error) {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		target, err := r.Readlink(name)
		return state{kind: symlink, id: workspace.LinkID(target)}, workspace.KeyOf(fi), err
	case !mode.IsRegular():
		return state{kind: blocked}, workspace.StatKey{}, nil
	case fi.Size() > limit:
		return state{kind: oversized}, workspace.KeyOf(fi), nil
	}
	id, now, err := workspace.HashFile(ctx, r, name, fi)
	if errors.Is(err, workspace.ErrNotRegular) { // no longer a file: read what it is now
		if fi, err = r.Lstat(name); err == nil && !fi.Mode().IsRegular() {
			return readState(ctx, r, name, fi, limit)
		}
		if err == nil {
			err = errors.New("changed while being read")
		}
	}
	if err != nil {
		return state{}, workspace.StatKey{}, fmt.Errorf("hash %q: %w", name, err)
	}
	return state{kind: fileKind(now.Mode()), id: id}, workspace.KeyOf(now), nil
}
