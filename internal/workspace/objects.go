package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// WriteObjects stores the loop root's current content in s as git objects
// (its blobs and trees, the same tree [Hasher.Snapshot] names) and returns
// its snapshot, the id of the top tree. Only missing objects are written.
//
// The walk is that of Snapshot and refreshes the same blob cache, so files
// whose stat is unchanged are not read. The store is then filled from the
// top tree down, and a tree already in s is taken to be complete, as in
// any git object store (objects are written before the trees that name
// them, here and by git): for an unchanged root WriteObjects asks s about
// one object; for a changed file, about the entries of the directories on
// its path. WriteObjects writes nothing but the objects of s.
//
// A file that changes while it is stored is stored as read: the returned
// tree describes the content that s holds. WriteObjects stops when ctx is
// done (see Snapshot); the objects it stored until then stay in s.
func (h *Hasher) WriteObjects(ctx context.Context, s storer.EncodedObjectStorer) (Snapshot, error) {
	id, _, err := h.walk(ctx, s)
	if err != nil {
		return "", fmt.Errorf("store snapshot of %q: %w", h.root, err)
	}
	return Snapshot(id.String()), nil
}

// readBlob reads the regular file name in r (at rel), whose lstat result
// is fi, as readStable does, and returns the id of the blob cv (nil: none)
// converts it to, with the status of the file read and why no checkout
// reproduces it ("" when one does). When storing, it stores the blob
// unless the store has it.
func (w *walker) readBlob(r *os.Root, name string, fi fs.FileInfo, rel string, cv *convs) (ObjectID, fs.FileInfo, string, error) {
	var id ObjectID
	var why string
	now, err := readStable(r, name, fi, w.k.maxFileSize(), func(f *os.File, now fs.FileInfo) error {
		blob, err := readAll(w.ctx, f, now.Size())
		if err == nil && cv != nil {
			blob, why, err = w.k.convertFile(rel, blob, *cv, w.base)
		}
		if err != nil {
			return err
		}
		if id = hashObject("blob", blob); w.mode == storing {
			return w.ensure(plumbing.BlobObject, id, blob)
		}
		return nil
	})
	return id, now, why, err
}

// tree makes sure the tree holding es, and everything in it, is in the
// store, and returns its id. It descends only into what is missing.
func (w *walker) tree(es []entry) (ObjectID, error) {
	body := treeBody(es)
	id := hashObject("tree", body)
	if w.has(id) {
		return id, nil
	}
	changed := false
	for i := range es {
		e := &es[i]
		var got ObjectID
		var err error
		switch {
		case e.mode == modeTree:
			got, err = w.tree(e.obj.sub)
		case e.obj == nil || !e.obj.unverified:
			continue // read and stored by the walk
		case e.mode == modeSymlink:
			got, err = e.id, w.ensure(plumbing.BlobObject, e.id, []byte(e.obj.link))
		default:
			got, err = w.cached(e)
		}
		if err != nil {
			return ObjectID{}, err
		}
		changed = changed || got != e.id
		e.id = got
	}
	if changed {
		body = treeBody(es)
		id = hashObject("tree", body)
	}
	return id, writeObject(w.s, plumbing.TreeObject, id, body)
}

// cached stores the blob of a file hashed from the cache, unless the
// store has it, and returns its id: that of what was read if the file
// changed since.
func (w *walker) cached(e *entry) (ObjectID, error) {
	if w.has(e.id) {
		return e.id, nil
	}
	if err := live(w.ctx); err != nil {
		return ObjectID{}, err
	}
	rel, name := e.obj.rel, filepath.FromSlash(e.obj.rel)
	fi, err := w.root.Lstat(name)
	if err == nil && !fi.Mode().IsRegular() {
		err = errChanged
	}
	if err != nil {
		return ObjectID{}, fmt.Errorf("store %q: %w", rel, err)
	}
	if err := CheckFileSize(rel, fi.Size(), w.k.maxFileSize()); err != nil {
		return ObjectID{}, err
	}
	var cv *convs
	if e.obj.conv != nil {
		cv = &e.obj.conv.cv
	}
	return w.read(w.root, name, rel, statOf(fi), cv)
}

// has reports whether the store holds the object id.
func (w *walker) has(id ObjectID) bool {
	return w.s.HasEncodedObject(plumbing.Hash(id)) == nil
}

// ensure stores an object unless the store has it.
func (w *walker) ensure(kind plumbing.ObjectType, id ObjectID, content []byte) error {
	if w.has(id) {
		return nil
	}
	return writeObject(w.s, kind, id, content)
}

// writeObject stores in s an object whose id the caller computed, and
// checks that the store agrees.
func writeObject(s storer.EncodedObjectStorer, kind plumbing.ObjectType, id ObjectID, content []byte) error {
	obj := &plumbing.MemoryObject{}
	obj.SetType(kind)
	obj.Write(content)
	got, err := s.SetEncodedObject(obj)
	if err != nil {
		return fmt.Errorf("store %s %x: %w", kind, id, err)
	}
	if got != plumbing.Hash(id) {
		return fmt.Errorf("store %s %x: the store computed id %s", kind, id, got)
	}
	return nil
}
