package workspace

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Restore makes the content of the loop root equal to the tree snapshot,
// whose objects s holds ([Hasher.WriteObjects]), and returns how many
// paths it changed (written, mode changed, deleted).
//
// Files are written as a checkout writes them, smudged by the tree's
// .gitattributes ([Smudger]); a file already holding that is left alone,
// and one whose execute bit alone differs is chmod'ed (through the file it
// compared, never a link). It deletes what a snapshot would record but the
// tree lacks, and never touches .git, the root's .loop or ignored files
// (each directory's .gitignore is restored first, so the rules are the
// restored ones) unless the tree needs their path. It writes as a
// [Writer]: never through a symbolic link or a named pipe; a directory the
// tree needs where something else is gets replaced. Afterwards a snapshot
// of the root equals tree, unless .git/info/exclude ignores some of it.
//
// It stops when ctx is done, between entries and within a write, with an
// error wrapping its cause (what it wrote stays written), and refuses a
// tree beyond MaxDepth or MaxPathBytes (ErrTooDeep).
func Restore(ctx context.Context, root string, s storer.EncodedObjectStorer, tree Snapshot) (changed int, err error) {
	return RestoreWith(ctx, root, s, tree, Checkout{})
}

// RestoreWith is Restore with the settings of k (its Base and MaxFileSize
// are not used).
func RestoreWith(ctx context.Context, root string, s storer.EncodedObjectStorer, tree Snapshot, k Checkout) (changed int, err error) {
	raw, err := hex.DecodeString(string(tree))
	if err != nil || len(raw) != sha1.Size {
		return 0, fmt.Errorf("restore %q: %q is not a snapshot", root, tree)
	}
	w, err := OpenWriter(root)
	if err != nil {
		return 0, fmt.Errorf("restore %q: %w", root, err)
	}
	defer w.Close()
	rules, err := readInfoExclude(w.root)
	if err != nil {
		return 0, fmt.Errorf("restore %q: %w", root, err)
	}
	x := &restorer{ctx: ctx, s: s, sm: NewSmudger(s, plumbing.Hash(raw), k)}
	if err := x.dir(w.root, nil, rules, plumbing.Hash(raw)); err != nil {
		return x.changed, fmt.Errorf("restore %q to %s: %w", root, tree.Short(), err)
	}
	return x.changed, nil
}

// restorer is one Restore.
type restorer struct {
	ctx     context.Context
	s       storer.EncodedObjectStorer
	sm      *Smudger
	changed int
}

// dir makes directory r, at path, hold what the tree id holds. path is
// extended in place (see eachEntry).
func (x *restorer) dir(r *os.Root, path []string, rules []rule, id plumbing.Hash) error {
	es, err := readTree(x.s, id, strings.Join(path, "/"))
	if err != nil {
		return err
	}
	x.sm.enter(strings.Join(path, "/"), es)
	want := make(map[string]bool, len(es))
	for _, e := range es {
		if err := checkName(e.Name, len(path) == 0); err != nil {
			return err
		}
		want[e.Name] = true
	}
	i := slices.IndexFunc(es, func(e object.TreeEntry) bool { return e.Name == ".gitignore" })
	if i >= 0 {
		if err := x.put(r, path, rules, es[i]); err != nil {
			return err
		}
	}
	if rules, err = readRules(r, ".gitignore", path, rules); err != nil {
		return err
	}
	if err := x.clear(r, path, rules, want); err != nil {
		return err
	}
	for _, e := range es {
		if e.Name == ".gitignore" {
			continue
		}
		if err := x.put(r, path, rules, e); err != nil {
			return err
		}
	}
	return nil
}

// checkName refuses a tree entry that escapes its directory or names what
// Restore must not write.
func checkName(name string, top bool) error {
	switch {
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00"),
		strings.EqualFold(name, ".git"), top && IsLoop(name):
		return fmt.Errorf("the tree has an entry named %q, which cannot be restored", name)
	}
	return nil
}

// put makes the child of r named e.Name what e says.
func (x *restorer) put(r *os.Root, path []string, rules []rule, e object.TreeEntry) error {
	if err := live(x.ctx); err != nil {
		return err
	}
	child := append(path, e.Name) // in place: see dir
	if err := checkDepth(child); err != nil {
		return err
	}
	rel := strings.Join(child, "/")
	if e.Mode == filemode.Dir {
		return x.subdir(r, child, rules, e)
	}
	fi, err := r.Lstat(e.Name)
	if errors.Is(err, fs.ErrNotExist) {
		fi, err = nil, nil
	}
	if err != nil {
		return err
	}
	switch e.Mode {
	case filemode.Symlink:
		return x.symlink(r, rel, e, fi)
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		return x.file(r, rel, e, fi)
	}
	return fmt.Errorf("%q has mode %s, which cannot be restored", rel, e.Mode)
}

// subdir makes the child e.Name of r a real directory and restores it.
func (x *restorer) subdir(r *os.Root, path []string, rules []rule, e object.TreeEntry) error {
	fi, replaced, err := realDir(r, e.Name, strings.Join(path, "/"), reclaim)
	if replaced != nil {
		x.changed++
	}
	if err != nil {
		return err
	}
	sub, err := openSame(r, e.Name, fi)
	if err != nil {
		return err
	}
	defer sub.Close()
	return x.dir(sub, path, rules, e.Hash)
}

func (x *restorer) symlink(r *os.Root, rel string, e object.TreeEntry, fi fs.FileInfo) error {
	target, err := readObject(x.s, plumbing.BlobObject, e.Hash)
	if err != nil {
		return fmt.Errorf("%q: %w", rel, err)
	}
	if fi != nil && fi.Mode()&fs.ModeSymlink != 0 {
		if cur, err := r.Readlink(e.Name); err == nil && cur == string(target) {
			return nil
		}
	}
	x.changed++
	return putLink(r, e.Name, string(target), reclaim)
}

func (x *restorer) file(r *os.Root, rel string, e object.TreeEntry, fi fs.FileInfo) error {
	perm := fs.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	data, err := x.sm.smudged(rel, e.Hash)
	if err != nil {
		return fmt.Errorf("%q: %w", rel, err)
	}
	want, size := e.Hash, int64(-1)
	if data != nil {
		want, size = plumbing.Hash(hashObject("blob", data)), int64(len(data))
	}
	if fi != nil && fi.Mode().IsRegular() {
		kept, err := x.keep(r, e.Name, want, size, fi, perm)
		if err != nil {
			return fmt.Errorf("%q: %w", rel, err)
		}
		if kept {
			return nil
		}
	}
	x.changed++
	if data != nil {
		err = putFile(r, e.Name, bytes.NewReader(data), perm, reclaim)
	} else {
		err = x.write(r, e, perm)
	}
	if err != nil {
		return fmt.Errorf("%q: %w", rel, err)
	}
	return nil
}

// write replaces the child e.Name of r with the blob e.Hash.
func (x *restorer) write(r *os.Root, e object.TreeEntry, perm fs.FileMode) error {
	obj, err := x.s.EncodedObject(plumbing.BlobObject, e.Hash)
	if err != nil {
		return err
	}
	src, err := obj.Reader()
	if err != nil {
		return err
	}
	defer src.Close()
	return putFile(r, e.Name, ctxReader{x.ctx, src}, perm, reclaim)
}

// keep reports whether the regular file name (lstat: fi) holds the blob
// want, of size bytes (-1: the store says), and then gives it perm's
// execute bits through the file it read, the one lstat found.
func (x *restorer) keep(r *os.Root, name string, want plumbing.Hash, size int64, fi fs.FileInfo, perm fs.FileMode) (bool, error) {
	var err error
	if size < 0 {
		size, err = x.s.EncodedObjectSize(want)
	}
	if err != nil || size != fi.Size() {
		return false, err
	}
	f, now, err := openRegular(r, name, fi)
	if errors.Is(err, errChanged) {
		return false, nil // replaced since lstat: written over
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := blobHash(size)
	if err := pump(x.ctx, nil, f, h, size); err != nil {
		if errors.Is(err, errChanged) {
			err = nil // changed while read: written over
		}
		return false, err
	}
	if plumbing.Hash(h.Sum(nil)) != want {
		return false, nil
	}
	if now.Mode()&0o100 == perm&0o100 {
		return true, nil
	}
	x.changed++
	return true, f.Chmod(now.Mode().Perm()&^0o111 | perm&0o111)
}

// clear deletes what directory r, at path, holds that a snapshot would
// record and keep does not name.
func (x *restorer) clear(r *os.Root, path []string, rules []rule, keep map[string]bool) error {
	entries, err := openListing(r).entries()
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	child := append(path, "") // in place: see dir
	for _, e := range entries {
		if keep[e.name] || e.name == ".git" || (len(path) == 0 && IsLoop(e.name)) {
			continue
		}
		child[len(path)] = e.name
		mode := e.st.key.mode
		if (!mode.IsDir() && !mode.IsRegular() && mode&fs.ModeSymlink == 0) || ignored(rules, child, mode.IsDir()) {
			continue
		}
		if err := x.remove(r, child, rules, e.st.fi); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the child of r at path: a file or link, or what of a
// directory a snapshot records, then the directory if left empty.
func (x *restorer) remove(r *os.Root, path []string, rules []rule, fi fs.FileInfo) error {
	name := path[len(path)-1]
	if err := live(x.ctx); err != nil {
		return err
	}
	if !fi.IsDir() {
		x.changed++
		return r.Remove(name)
	}
	if err := checkDepth(path); err != nil {
		return err
	}
	sub, err := openSame(r, name, fi)
	if err != nil {
		return err
	}
	rules, err = readRules(sub, ".gitignore", path, rules)
	if err == nil {
		err = x.clear(sub, path, rules, nil)
	}
	sub.Close()
	if err != nil {
		return err
	}
	if err := r.Remove(name); err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
