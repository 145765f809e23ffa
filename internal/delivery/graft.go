package delivery

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/loop-action/loop-action/internal/gitremote"
)

// change is what the edits of one path do to one entry of a tree.
type change struct {
	leaf bool             // the entry itself is set (to) or deleted (to nil)
	to   *leaf            // its new file, when set
	sub  map[string]*leaf // edits below it, by path relative to it
}

// graft returns tree with the edits at (relative paths: the new file, nil
// to delete) made, reading and writing only the trees on their paths, and
// whether the result is empty (only the top tree is kept when it is).
// prefix names tree in errors.
func (d *Delivery) graft(tree plumbing.Hash, prefix string, at map[string]*leaf) (plumbing.Hash, bool, error) {
	old, err := d.entries(tree)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	es, groups := slices.Clone(old), group(at)
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		if es, err = d.graftEntry(es, prefix, name, groups[name]); err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	if len(es) == 0 && prefix != "" {
		return plumbing.ZeroHash, true, nil
	}
	h, err := putTree(d.st, es)
	return h, len(es) == 0, err
}

// group sorts edits by the first component of their paths.
func group(at map[string]*leaf) map[string]*change {
	g := map[string]*change{}
	for p, to := range at {
		head, rest, deep := strings.Cut(p, "/")
		c := g[head]
		if c == nil {
			c = &change{sub: map[string]*leaf{}}
			g[head] = c
		}
		if deep {
			c.sub[rest] = to
		} else {
			c.leaf, c.to = true, to
		}
	}
	return g
}

// graftEntry makes the change c to the entry name of es.
func (d *Delivery) graftEntry(es []object.TreeEntry, prefix, name string, c *change) ([]object.TreeEntry, error) {
	i := slices.IndexFunc(es, func(e object.TreeEntry) bool { return e.Name == name })
	p := join(prefix, name)
	switch {
	case c.leaf && c.to != nil: // a file where there was anything: what was below it goes
		return set(es, i, object.TreeEntry{Name: name, Mode: c.to.mode, Hash: c.to.hash}), nil
	case len(c.sub) == 0: // deleted
		if i >= 0 {
			es = slices.Delete(es, i, i+1)
		}
		return es, nil
	}
	var sub plumbing.Hash
	if i >= 0 && es[i].Mode == filemode.Dir {
		sub = es[i].Hash
	} else if i >= 0 && !c.leaf {
		return nil, fmt.Errorf("cannot deliver below %q: the base has a file there that a checkout of it does not show", p)
	}
	h, empty, err := d.graft(sub, p, c.sub)
	if err != nil {
		return nil, err
	}
	if empty {
		if i >= 0 {
			es = slices.Delete(es, i, i+1)
		}
		return es, nil
	}
	return set(es, i, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}), nil
}

// set puts e at index i of es, or appends it when i < 0.
func set(es []object.TreeEntry, i int, e object.TreeEntry) []object.TreeEntry {
	if i < 0 {
		return append(es, e)
	}
	es[i] = e
	return es
}

// putTree stores the tree holding es, in git's order, and returns its id.
func putTree(s storer.EncodedObjectStorer, es []object.TreeEntry) (plumbing.Hash, error) {
	es = slices.Clone(es)
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(es, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	obj := s.NewEncodedObject()
	if err := (&object.Tree{Entries: es}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// lookup returns the entry at path p under tree root, if there is one.
func (d *Delivery) lookup(root plumbing.Hash, p string) (object.TreeEntry, bool, error) {
	return gitremote.Lookup(d.entries, root, strings.Split(p, "/"))
}
