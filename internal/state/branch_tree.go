package state

import (
	"fmt"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"

	"github.com/loop-action/loop-action/internal/gitremote"
	"github.com/loop-action/loop-action/internal/workspace"
)

// objects reads and writes the git objects of the state branch in the
// local store, keeping recently decoded trees (immutable, like every
// object) in memory. Callers hold the Branch's mutex.
type objects struct {
	s       storage.Storer
	trees   map[plumbing.Hash][]object.TreeEntry
	written int // objects stored (see cache.cacheSize)
}

// maxCachedTrees bounds the decoded trees kept; the cache is dropped when full.
const maxCachedTrees = 4096

func newObjects(s storage.Storer) *objects {
	return &objects{s: s, trees: map[plumbing.Hash][]object.TreeEntry{}}
}

// tree returns the entries of tree h (none for the zero hash). The caller
// must not modify them.
func (o *objects) tree(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	if es, ok := o.trees[h]; ok {
		return es, nil
	}
	t, err := object.GetTree(o.s, h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	if len(o.trees) >= maxCachedTrees {
		clear(o.trees)
	}
	o.trees[h] = t.Entries
	return t.Entries, nil
}

// putTree stores a tree holding es (in any order) and returns its id.
func (o *objects) putTree(es []object.TreeEntry) (plumbing.Hash, error) {
	es = slices.Clone(es)
	sort.Sort(object.TreeEntrySorter(es))
	obj := o.s.NewEncodedObject()
	if err := (&object.Tree{Entries: es}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := o.put(obj)
	if err == nil {
		o.trees[h] = es
	}
	return h, err
}

// putBlob stores a blob and returns its id.
func (o *objects) putBlob(data []byte) (plumbing.Hash, error) {
	obj := o.s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

// put stores obj unless the store has it.
func (o *objects) put(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	if h := obj.Hash(); o.s.HasEncodedObject(h) == nil {
		return h, nil
	}
	o.written++
	return o.s.SetEncodedObject(obj)
}

// putCommit stores a commit and returns its id.
func (o *objects) putCommit(c *object.Commit) (plumbing.Hash, error) {
	obj := o.s.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

// blob returns the content of blob h.
func (o *objects) blob(h plumbing.Hash) ([]byte, error) { return workspace.ReadBlob(o.s, h) }

// lookup returns the entry at path under tree root, if there is one.
func (o *objects) lookup(root plumbing.Hash, path []string) (object.TreeEntry, bool, error) {
	return gitremote.Lookup(o.tree, root, path)
}

// entries returns the entries of the tree at path under root; none when
// there is no such tree.
func (o *objects) entries(root plumbing.Hash, path ...string) ([]object.TreeEntry, error) {
	e, ok, err := o.lookup(root, path)
	if err != nil || !ok || e.Mode != filemode.Dir {
		return nil, err
	}
	return o.tree(e.Hash)
}

// graft returns the id of the tree root with the tree at path (created if
// missing) replaced by what edit makes of its entries. Each tree on the
// path is rewritten; nothing else is read.
func (o *objects) graft(root plumbing.Hash, path []string, edit func([]object.TreeEntry) ([]object.TreeEntry, error)) (plumbing.Hash, error) {
	es, err := o.tree(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if len(path) == 0 {
		next, err := edit(slices.Clone(es))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return o.putTree(next)
	}
	i := slices.IndexFunc(es, func(x object.TreeEntry) bool { return x.Name == path[0] })
	var sub plumbing.Hash
	if i >= 0 {
		if es[i].Mode != filemode.Dir {
			return plumbing.ZeroHash, fmt.Errorf("%q is a file where a directory should be", path[0])
		}
		sub = es[i].Hash
	}
	sub, err = o.graft(sub, path[1:], edit)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	next := slices.Clone(es)
	e := object.TreeEntry{Name: path[0], Mode: filemode.Dir, Hash: sub}
	if i >= 0 {
		next[i] = e
	} else {
		next = append(next, e)
	}
	return o.putTree(next)
}
