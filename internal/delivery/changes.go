package delivery

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loop-action/loop-action/internal/secret"
	"github.com/loop-action/loop-action/internal/workspace"
)

// leaf is a file or symbolic link of a tree.
type leaf struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// edit is a path whose file differs between a checkout of the base and
// the loop root; to is nil where the root has none.
type edit struct {
	path string
	to   *leaf
}

// apply computes the delivered tree: the base's tree with the edits that
// turn a checkout of the base into snap (the root) and that are
// delivered; it fills Changes and Excluded.
func (d *Delivery) apply(s Spec, snap plumbing.Hash) error {
	edits, err := d.edits(snap)
	if err != nil {
		return err
	}
	keep, out, err := d.partition(edits, s.Exclude)
	if err != nil {
		return err
	}
	if err := d.checkHidden(keep); err != nil {
		return err
	}
	if err := d.checkSecrets(keep, s.Secrets); err != nil {
		return err
	}
	if d.Changes, err = d.describe(keep); err != nil {
		return err
	}
	if d.Excluded, err = d.describe(out); err != nil {
		return err
	}
	at := make(map[string]*leaf, len(keep))
	for _, e := range keep {
		at[e.path] = e.to
	}
	d.tree, _, err = d.graft(d.baseTree, "", at)
	return err
}

// edits returns the edits that turn a checkout of the base into the
// snapshot target and change something in the base's own tree.
func (d *Delivery) edits(target plumbing.Hash) ([]edit, error) {
	var edits []edit
	if err := d.diff(d.view, target, "", &edits); err != nil {
		return nil, err
	}
	return d.real(edits)
}

// entries returns the entries of tree h (none for the zero hash).
func (d *Delivery) entries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := object.GetTree(d.st, h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	return t.Entries, nil
}

// diff appends the edits that turn tree a into tree b, found at prefix.
func (d *Delivery) diff(a, b plumbing.Hash, prefix string, out *[]edit) error {
	if a == b {
		return nil
	}
	aes, err := d.entries(a)
	if err != nil {
		return err
	}
	bes, err := d.entries(b)
	if err != nil {
		return err
	}
	byName := map[string][2]*object.TreeEntry{}
	for i := range aes {
		byName[aes[i].Name] = [2]*object.TreeEntry{&aes[i], nil}
	}
	for i := range bes {
		p := byName[bes[i].Name]
		p[1] = &bes[i]
		byName[bes[i].Name] = p
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if err := checkEntry(byName[name][1], join(prefix, name)); err != nil {
			return err
		}
		if err := d.diffEntry(byName[name][0], byName[name][1], join(prefix, name), out); err != nil {
			return err
		}
	}
	return nil
}

// checkEntry refuses an entry of a target tree that no checkout could
// hold: a name that is empty, ".", "..", or holds a slash or a NUL, or a
// mode other than a file's, a link's or a directory's. The trees hashed
// from disk never have one; a workspace read from a state branch, which
// anyone who may push can write, might.
func checkEntry(e *object.TreeEntry, p string) error {
	if e == nil {
		return nil
	}
	switch e.Mode {
	case filemode.Regular, filemode.Executable, filemode.Symlink, filemode.Dir:
	default:
		return fmt.Errorf("the tree has %q with mode %s, which no checkout holds", p, e.Mode)
	}
	if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") {
		return fmt.Errorf("the tree has an entry named %q, which no checkout holds", e.Name)
	}
	return nil
}

// diffEntry appends the edits that turn entry x into entry y (either nil)
// at path p.
func (d *Delivery) diffEntry(x, y *object.TreeEntry, p string, out *[]edit) error {
	xDir, yDir := x != nil && x.Mode == filemode.Dir, y != nil && y.Mode == filemode.Dir
	switch {
	case x != nil && y != nil && x.Hash == y.Hash && x.Mode == y.Mode:
		return nil
	case xDir && yDir:
		return d.diff(x.Hash, y.Hash, p, out)
	}
	if xDir {
		if err := d.diff(x.Hash, plumbing.ZeroHash, p, out); err != nil {
			return err
		}
	} else if x != nil && (y == nil || yDir) {
		*out = append(*out, edit{path: p})
	}
	if yDir {
		return d.diff(plumbing.ZeroHash, y.Hash, p, out)
	}
	if y != nil {
		*out = append(*out, edit{path: p, to: &leaf{mode: y.Mode, hash: y.Hash}})
	}
	return nil
}

// real drops the edits that change nothing in the base's own tree: a
// file the base tracks but its ignore rules hid, that the root shows
// unchanged.
func (d *Delivery) real(edits []edit) ([]edit, error) {
	var out []edit
	for _, e := range edits {
		from, ok, err := d.lookup(d.baseTree, e.path)
		if err != nil {
			return nil, err
		}
		if e.to == nil || !ok || from.Hash != e.to.hash || normal(from.Mode) != e.to.mode {
			out = append(out, e)
		}
	}
	return out, nil
}

// normal is the mode a checkout records for m.
func normal(m filemode.FileMode) filemode.FileMode {
	if m == filemode.Deprecated {
		return filemode.Regular
	}
	return m
}

// partition splits edits into those delivered and those kept out: by
// never (a path .git could be), by exclude, and then every edit that
// cannot coexist with the base's version of a path kept out (a file kept
// where the root has a directory, or the directories above a path kept).
func (d *Delivery) partition(edits []edit, exclude func(string) bool) (keep, out []edit, err error) {
	kept := map[string]bool{}
	for _, e := range edits {
		kept[e.path] = never(e.path) || (exclude != nil && exclude(e.path))
	}
	for changed := true; changed; {
		changed = false
		for _, e := range edits {
			if !kept[e.path] {
				continue
			}
			from, ok, err := d.lookup(d.baseTree, e.path)
			if err != nil {
				return nil, nil, err
			}
			for _, o := range edits {
				if !kept[o.path] && ok && conflicts(e.path, from.Mode, o.path) {
					kept[o.path], changed = true, true
				}
			}
		}
	}
	for _, e := range edits {
		if kept[e.path] {
			out = append(out, e)
		} else {
			keep = append(keep, e)
		}
	}
	return keep, out, nil
}

// conflicts reports whether an edit at other cannot be delivered while
// the base's entry at kept, of mode m, stays: other lies under a kept
// file, or above the kept path.
func conflicts(kept string, m filemode.FileMode, other string) bool {
	return (m != filemode.Dir && strings.HasPrefix(other, kept+"/")) || strings.HasPrefix(kept, other+"/")
}

// never reports whether a path may never be delivered: one with a
// component that git, or a case-folding file system, takes for .git, or
// under the top .loop (in any spelling such a file system takes for it:
// workspace.IsLoop).
func never(p string) bool {
	parts := strings.Split(p, "/")
	if workspace.IsLoop(parts[0]) {
		return true
	}
	return slices.ContainsFunc(parts, func(c string) bool {
		return strings.EqualFold(strings.TrimRight(c, ". "), ".git") || strings.EqualFold(c, "git~1")
	})
}

// checkHidden fails when an edit would delete a file the base tracks
// that is still in the root, where the root's ignore rules hide it from
// the snapshot: the commit would lack a file the gate's checks had on
// disk, and a checkout of it would not be what was measured.
func (d *Delivery) checkHidden(keep []edit) error {
	r, err := workspace.OpenRoot(d.root)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, e := range keep {
		if e.to != nil {
			continue
		}
		fi, err := r.Lstat(filepath.FromSlash(e.path))
		switch {
		case err == nil && !fi.IsDir(): // a directory replaced the file: its files are edits of their own
			return fmt.Errorf("%w: %q is in the loop root but ignored, so the commit would delete it", ErrHidden, e.path)
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("check that %q is gone from the loop root: %w", e.path, err)
		}
	}
	return nil
}

// checkSecrets fails when a file to deliver holds a form of a secret.
func (d *Delivery) checkSecrets(keep []edit, secrets []secret.Secret) error {
	if len(secrets) == 0 {
		return nil
	}
	f := secret.NewFinder(secrets)
	for _, e := range keep {
		if e.to == nil {
			continue
		}
		data, err := workspace.ReadBlob(d.st, e.to.hash)
		if err != nil {
			return fmt.Errorf("read %q: %w", e.path, err)
		}
		if name := f.Find(data); name != "" {
			return &secret.HeldError{Path: e.path, Variable: name}
		}
	}
	return nil
}

// describe names each edit's change against the base's own tree.
func (d *Delivery) describe(edits []edit) ([]Change, error) {
	var cs []Change
	for _, e := range edits {
		from, ok, err := d.lookup(d.baseTree, e.path)
		if err != nil {
			return nil, err
		}
		cs = append(cs, Change{Path: e.path, Kind: kind(from, ok, e.to)})
	}
	sortChanges(cs)
	return cs, nil
}

// kind names the change from the base's entry (if ok) to the leaf to.
func kind(from object.TreeEntry, ok bool, to *leaf) string {
	switch {
	case !ok:
		return Added
	case to == nil:
		return Deleted
	case from.Mode == filemode.Dir, (from.Mode == filemode.Symlink) != (to.mode == filemode.Symlink):
		return Type
	case from.Hash == to.hash:
		return Mode
	}
	return Modified
}

// join joins a directory ("" for the top) and a name.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
