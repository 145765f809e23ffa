package delivery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Local says what to bring into a checkout.
type Local struct {
	Root     string                     // the checkout: its .git must hold Base; its files are written
	Base     string                     // the commit the run started from (full sha)
	Snapshot string                     // the workspace to bring: a tree whose objects Objects holds
	Objects  storer.EncodedObjectStorer // the store holding Snapshot (a state branch's)
	// Checkout is the checkout's git settings (core.autocrlf, core.eol):
	// files are written as a checkout with them writes them.
	Checkout workspace.Checkout
}

// LocalEditsError is the error of an Apply that would overwrite local
// edits: nothing was written.
type LocalEditsError struct {
	Paths []string // the paths the run changed that hold something else than the base's version
}

func (e *LocalEditsError) Error() string {
	return fmt.Sprintf("%d paths the run changed have local edits: %s", len(e.Paths), strings.Join(e.Paths, ", "))
}

// Apply brings the workspace l.Snapshot into the checkout l.Root as
// uncommitted changes: only the paths it changes against a checkout of
// l.Base (by the workspace's rules: never .loop, any spelling of .git, or
// ignored files), each written as the workspace has it. A path whose
// checkout already holds the workspace's version is left alone. When any
// other path the run changed differs in the checkout from the base's
// version (its content, type or execute bit, or a file where the base has
// none), or sits below a symbolic link or a file that stays, it writes
// nothing and fails with a *LocalEditsError naming them. Every write goes
// through a workspace.Writer: never through a symbolic link, never into
// .git or .loop. It returns the changes it made.
func Apply(ctx context.Context, l Local) (_ []Change, err error) {
	defer wrap(&err, "apply the workspace %s to %q", phrase.Short(l.Snapshot), l.Root)
	if !fullSHA(l.Base) || !fullSHA(l.Snapshot) || l.Objects == nil {
		return nil, fmt.Errorf("base %q and snapshot %q must be full ids, with a store", l.Base, l.Snapshot)
	}
	d, err := open(ctx, l.Root, l.Base, l.Objects)
	if err != nil {
		return nil, err
	}
	edits, err := d.edits(plumbing.NewHash(l.Snapshot))
	if err != nil {
		return nil, err
	}
	edits = slices.DeleteFunc(edits, func(e edit) bool { return never(e.path) })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := workspace.OpenWriter(l.Root)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	d.baseFiles = workspace.NewSmudger(d.st, d.baseTree, l.Checkout)
	d.wsFiles = workspace.NewSmudger(d.st, plumbing.NewHash(l.Snapshot), l.Checkout)
	todo, err := d.plan(ctx, w, edits)
	if err != nil {
		return nil, err
	}
	if err := d.write(ctx, w, todo); err != nil {
		return nil, err
	}
	return d.describe(todo)
}

// plan returns the edits to make: those whose path the checkout does not
// hold as the workspace has it already. It fails when one would overwrite
// a local edit.
func (d *Delivery) plan(ctx context.Context, w *workspace.Writer, edits []edit) ([]edit, error) {
	deleted := map[string]bool{}
	for _, e := range edits {
		if e.to == nil {
			deleted[e.path] = true
		}
	}
	var todo []edit
	var edited []string
	for _, e := range edits {
		done, clean, err := d.state(ctx, w, e, deleted)
		if err != nil {
			return nil, err
		}
		switch {
		case done:
		case clean:
			todo = append(todo, e)
		default:
			edited = append(edited, e.path)
		}
	}
	if len(edited) > 0 {
		return nil, &LocalEditsError{Paths: edited}
	}
	return todo, nil
}

// state reports whether the checkout holds e's path as the workspace has
// it (done), or as the base has it with nothing in the way of the write
// (clean).
func (d *Delivery) state(ctx context.Context, w *workspace.Writer, e edit, deleted map[string]bool) (done, clean bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, false, err
	}
	local, there, err := w.Lookup(e.path)
	if err != nil {
		return false, false, err
	}
	if d.same(local, there, e.path, e.to, d.wsFiles) {
		return true, false, nil
	}
	if ok, err := d.parentsClear(w, e.path, deleted); err != nil || !ok {
		return false, false, err
	}
	from, inBase, err := d.lookup(d.baseTree, e.path)
	if err != nil {
		return false, false, err
	}
	switch {
	case !inBase:
		return false, !there, nil
	case from.Mode == filemode.Dir:
		return false, there && local.Mode.IsDir() && d.emptied(ctx, w, e.path, deleted), nil
	}
	base := leaf{mode: normal(from.Mode), hash: from.Hash}
	return false, d.same(local, there, e.path, &base, d.baseFiles), nil
}

// parentsClear reports whether every directory above p is a real
// directory in the checkout, missing, or a file the edits delete.
func (d *Delivery) parentsClear(w *workspace.Writer, p string, deleted map[string]bool) (bool, error) {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		local, there, err := w.Lookup(dir)
		if err != nil {
			return false, err
		}
		if there && !local.Mode.IsDir() && !(local.Mode.IsRegular() && deleted[dir]) {
			return false, nil
		}
	}
	return true, nil
}

// emptied reports whether the edits delete everything the directory dir
// holds but directories, so that a file can take its place.
func (d *Delivery) emptied(ctx context.Context, w *workspace.Writer, dir string, deleted map[string]bool) bool {
	all := func(string) bool { return true }
	held, err := w.Scan(ctx, dir, all, all)
	if err != nil {
		return false
	}
	for rel, e := range held {
		if !e.Mode.IsDir() && !deleted[rel] {
			return false
		}
	}
	return true
}

// checkedOut is what the checkout sm writes for the leaf l at p: a
// link's target, or a file's content as its filters make it.
func (d *Delivery) checkedOut(p string, l *leaf, sm *workspace.Smudger) ([]byte, error) {
	data, err := workspace.ReadBlob(d.st, l.hash)
	if err != nil || l.mode == filemode.Symlink {
		return data, err
	}
	return sm.File(p, data)
}

// same reports whether the checkout's entry at p (when there) is the
// leaf l (nil: nothing) of the tree sm checks out: its type, content as a
// checkout writes it, and execute bit.
func (d *Delivery) same(local workspace.Entry, there bool, p string, l *leaf, sm *workspace.Smudger) bool {
	if l == nil || !there {
		return l == nil && !there
	}
	data, err := d.checkedOut(p, l, sm)
	if err != nil {
		return false
	}
	switch l.mode {
	case filemode.Symlink:
		return local.Mode&fs.ModeSymlink != 0 && bytes.Equal(local.Data, data)
	case filemode.Executable, filemode.Regular:
		exec := local.Mode&0o100 != 0
		return local.Mode.IsRegular() && local.Size == int64(len(data)) && local.Sum == sha256.Sum256(data) &&
			exec == (l.mode == filemode.Executable)
	}
	return false
}

// write makes the edits: deletions first, the deepest first, then the
// files and links in path order, each through w.
func (d *Delivery) write(ctx context.Context, w *workspace.Writer, todo []edit) error {
	for i := len(todo) - 1; i >= 0; i-- {
		if e := todo[i]; e.to == nil {
			if err := w.Remove(e.path); err != nil {
				return err
			}
			removeEmptyParents(ctx, w, e.path)
		}
	}
	for _, e := range todo {
		if e.to == nil {
			continue
		}
		data, err := d.checkedOut(e.path, e.to, d.wsFiles)
		if err != nil {
			return fmt.Errorf("read %q: %w", e.path, err)
		}
		switch e.to.mode {
		case filemode.Symlink:
			err = w.Symlink(e.path, string(data))
		case filemode.Executable:
			err = w.WriteFile(e.path, data, 0o755)
		default:
			err = w.WriteFile(e.path, data, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// removeEmptyParents removes the directories above p that hold nothing
// any more, as git does when it deletes a file.
func removeEmptyParents(ctx context.Context, w *workspace.Writer, p string) {
	none := func(string) bool { return true }
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		held, err := w.Scan(ctx, dir, none, none)
		if err != nil || len(held) > 0 || w.Remove(dir) != nil {
			return
		}
	}
}
