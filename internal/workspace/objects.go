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

// WriteObjects stores the loop root's blobs and trees in s and returns its
// snapshot. The walk is Snapshot's, with the same cache; s is filled from
// the top down, a tree already there taken to be complete (objects are
// written before the trees naming them, here and by git), so an unchanged
// root costs one question to s. A file changing meanwhile is stored as
// read: the tree describes what s holds. It stops when ctx is done.
func (h *Hasher) WriteObjects(ctx context.Context, s storer.EncodedObjectStorer) (Snapshot, error) {
	id, _, err := h.walk(ctx, s)
	if err != nil {
		return "", fmt.Errorf("store snapshot of %q: %w", h.root, err)
	}
	return Snapshot(id.String()), nil
}

// readBlob reads the file name in r (at rel, lstat: fi) as readStable
// does, and returns the id of the blob cv (nil: none) makes of it, the
// status read and why no checkout reproduces it; it stores it if storing.
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

// tree stores the tree holding es and all in it, descending only into
// what is missing, and returns its id.
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

// cached stores the blob of a file hashed from the cache, if missing, and
// returns its id: of what was read, if the file changed since.
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

// writeObject stores an object whose id the caller computed, checking
// that s agrees.
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
