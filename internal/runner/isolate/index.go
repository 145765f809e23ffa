package isolate

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// rootEntry is what was last read of one path of the loop root.
type rootEntry struct {
	st   state
	seen workspace.Stamp
}

// index remembers the states of the loop root's files, so that unchanged
// files (by stat) are not read again.
type index struct {
	dir   string
	r     *os.Root          // for reading
	w     *workspace.Writer // for writing
	ents  map[string]rootEntry
	now   func() time.Time
	limit int64 // the largest file read (Options.MaxFileSize)
}

// state returns the state of p in the root, blocked when p is a directory
// or lies below something that is not a directory.
func (x *index) state(ctx context.Context, p string, dirs *dirCheck) (state, error) {
	ok, err := dirs.parentsReal(p)
	if err != nil {
		return state{}, err
	}
	if !ok {
		return x.blockedOrAbsent(p, dirs)
	}
	fi, err := x.r.Lstat(p)
	switch {
	case missing(err):
		return state{}, nil
	case err != nil:
		return state{}, err
	}
	return x.stateOf(ctx, p, fi)
}

// blockedOrAbsent tells apart a path whose parent is missing (absent) from
// one below a file or symbolic link (blocked: it cannot be written).
func (x *index) blockedOrAbsent(p string, dirs *dirCheck) (state, error) {
	for dir := parent(p); dir != ""; dir = parent(dir) {
		ok, err := dirs.isDir(parent(dir))
		if err != nil {
			return state{}, err
		}
		if !ok {
			continue
		}
		_, err = x.r.Lstat(dir)
		if missing(err) {
			return state{}, nil
		}
		return state{kind: blocked}, err
	}
	return state{}, nil
}

// stateOf returns the state of p, whose lstat result is fi; a file
// larger than the limit is an error.
func (x *index) stateOf(ctx context.Context, p string, fi fs.FileInfo) (state, error) {
	if e, ok := x.ents[p]; ok && e.seen.Vouches(workspace.KeyOf(fi)) {
		return e.st, nil
	}
	at := x.now()
	st, key, err := readState(ctx, x.r, p, fi, x.limit)
	if err == nil && st.kind == oversized {
		err = workspace.CheckFileSize(p, fi.Size(), x.limit)
	}
	if err != nil {
		return state{}, fmt.Errorf("read %q in the loop root: %w", p, err)
	}
	if st.present() {
		x.ents[p] = rootEntry{st: st, seen: workspace.Stamp{Key: key, At: at}}
	}
	return st, nil
}

// record remembers that p held st when its stat was key at time at.
func (x *index) record(p string, st state, key workspace.StatKey, at time.Time) {
	x.ents[p] = rootEntry{st: st, seen: workspace.Stamp{Key: key, At: at}}
}

// scan returns the state of every file the snapshot includes, and drops
// what it remembers of other paths.
func (x *index) scan(ctx context.Context) (map[string]state, error) {
	files, err := workspace.NewHasher(x.dir).Files(ctx) // what the snapshot includes
	if err != nil {
		return nil, err
	}
	out := make(map[string]state, len(files))
	for _, g := range byDir(files) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := x.scanDir(ctx, g, out); err != nil {
			return nil, err
		}
	}
	for p := range x.ents {
		if _, ok := out[p]; !ok {
			delete(x.ents, p)
		}
	}
	return out, nil
}

// scanDir adds the states of the files of g to out, through a root opened
// on their directory (a path lstat through the loop root opens every
// directory on the way).
func (x *index) scanDir(ctx context.Context, g dirGroup, out map[string]state) error {
	r := x.r
	if g.dir != "" {
		sub, err := workspace.OpenDir(x.r, g.dir)
		if missing(err) {
			return nil // removed since it was listed
		}
		if err != nil {
			return err
		}
		defer sub.Close()
		r = sub
	}
	for _, name := range g.names {
		fi, err := r.Lstat(name)
		if missing(err) {
			continue
		}
		if err != nil {
			return err
		}
		p := join(g.dir, name)
		if out[p], err = x.stateOf(ctx, p, fi); err != nil {
			return err
		}
	}
	return nil
}

// parent is path.Dir with "" for the top.
func parent(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}
