package gitremote

import (
	"errors"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Trees reads the entries of a tree (none for the zero hash). A caller
// may serve them from a cache; NewObjects does not modify them.
type Trees func(h plumbing.Hash) ([]object.TreeEntry, error)

// NewObjects returns the objects reachable from tree next that are not at
// the same path in tree prev (zero: nothing): a superset of what a remote
// holding prev lacks to hold next, so a push sends them and the commit
// and nothing else. It descends only into changed trees, and never into
// a submodule (a gitlink names a commit of another repository).
func NewObjects(trees Trees, next, prev plumbing.Hash) ([]plumbing.Hash, error) {
	if next.IsZero() {
		return nil, errors.New("no tree")
	}
	d := &differ{trees: trees, seen: map[plumbing.Hash]bool{}}
	err := d.walk(next, prev)
	return d.out, err
}

// differ is one NewObjects.
type differ struct {
	trees Trees
	seen  map[plumbing.Hash]bool
	out   []plumbing.Hash
}

func (d *differ) add(h plumbing.Hash) bool {
	if d.seen[h] {
		return false
	}
	d.seen[h] = true
	d.out = append(d.out, h)
	return true
}

func (d *differ) walk(next, prev plumbing.Hash) error {
	if next == prev || !d.add(next) {
		return nil
	}
	nes, err := d.trees(next)
	if err != nil {
		return err
	}
	pes, err := d.trees(prev)
	if err != nil {
		return err
	}
	old := make(map[string]object.TreeEntry, len(pes))
	for _, e := range pes {
		old[e.Name] = e
	}
	for _, e := range nes {
		p, ok := old[e.Name]
		switch {
		case ok && p.Hash == e.Hash, e.Mode == filemode.Submodule:
		case e.Mode != filemode.Dir:
			d.add(e.Hash)
		case ok && p.Mode == filemode.Dir:
			err = d.walk(e.Hash, p.Hash)
		default:
			err = d.walk(e.Hash, plumbing.ZeroHash)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Lookup returns the entry at path (its names, in order) under tree root,
// if there is one; a name below a non-tree is no entry.
func Lookup(trees Trees, root plumbing.Hash, path []string) (object.TreeEntry, bool, error) {
	e := object.TreeEntry{Mode: filemode.Dir, Hash: root}
	for _, name := range path {
		if e.Mode != filemode.Dir {
			return object.TreeEntry{}, false, nil
		}
		es, err := trees(e.Hash)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		i := slices.IndexFunc(es, func(x object.TreeEntry) bool { return x.Name == name })
		if i < 0 {
			return object.TreeEntry{}, false, nil
		}
		e = es[i]
	}
	return e, true, nil
}
