package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

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
	id, _, err := h.walk(ctx, &objectStore{s: s})
	if err != nil {
		return "", fmt.Errorf("store snapshot of %q: %w", h.root, err)
	}
	return Snapshot(id.String()), nil
}

// objectStore is where a walk of the loop root stores what it finds.
type objectStore struct {
	ctx   context.Context // the walk's
	s     storer.EncodedObjectStorer
	root  *os.Root // the loop root
	reads *atomic.Int64
	k     Checkout // how files convert
	base  Base
}

// file reads the regular file name in r (at rel), whose lstat result is
// fi and which converts as cv says, stores its blob unless the store has
// it, and returns its id with the status of the file read and why no
// checkout reproduces it ("" when one does).
func (o *objectStore) file(r *os.Root, name string, fi fs.FileInfo, rel string, cv *convs) (ObjectID, fs.FileInfo, string, error) {
	var convert func(b []byte) ([]byte, string, error)
	if cv != nil {
		convert = func(b []byte) ([]byte, string, error) { return o.k.convertFile(rel, b, *cv, o.base) }
	}
	return readBlob(o.ctx, r, name, fi, o.k.maxFileSize(), convert, func(id ObjectID, blob []byte) error {
		return o.ensure(plumbing.BlobObject, id, blob)
	})
}

// tree makes sure the tree holding es, and everything in it, is in the
// store, and returns its id. It descends only into what is missing.
func (o *objectStore) tree(es []entry) (ObjectID, error) {
	body := treeBody(es)
	id := hashObject("tree", body)
	if o.has(id) {
		return id, nil
	}
	changed := false
	for i := range es {
		e := &es[i]
		var got ObjectID
		var err error
		switch {
		case e.mode == modeTree:
			got, err = o.tree(e.obj.sub)
		case e.obj == nil || !e.obj.unverified:
			continue // read and stored by the walk
		case e.mode == modeSymlink:
			got, err = e.id, o.ensure(plumbing.BlobObject, e.id, []byte(e.obj.link))
		default:
			got, err = o.cached(e)
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
	return id, o.write(plumbing.TreeObject, id, body)
}

// cached stores the blob of a file hashed from the cache, unless the
// store has it, and returns its id: that of what was read if the file
// changed since.
func (o *objectStore) cached(e *entry) (ObjectID, error) {
	if o.has(e.id) {
		return e.id, nil
	}
	if err := live(o.ctx); err != nil {
		return ObjectID{}, err
	}
	name := filepath.FromSlash(e.obj.rel)
	fi, err := o.root.Lstat(name)
	if err == nil && !fi.Mode().IsRegular() {
		err = errChanged
	}
	if err == nil {
		err = CheckFileSize(e.obj.rel, fi.Size(), o.k.maxFileSize())
	}
	var id ObjectID
	var now fs.FileInfo
	if err == nil {
		o.reads.Add(1)
		var cv *convs
		if e.obj.conv != nil {
			cv = &e.obj.conv.cv
		}
		id, now, _, err = o.file(o.root, name, fi, e.obj.rel, cv)
	}
	switch {
	case errors.Is(err, errOverLimit):
		return ObjectID{}, tooLargeFile(e.obj.rel, now.Size(), o.k.maxFileSize())
	case errors.Is(err, ErrFileTooLarge):
		return ObjectID{}, err
	case err != nil:
		return ObjectID{}, fmt.Errorf("store %q: %w", e.obj.rel, err)
	}
	return id, nil
}

// has reports whether the store holds the object id.
func (o *objectStore) has(id ObjectID) bool {
	return o.s.HasEncodedObject(plumbing.Hash(id)) == nil
}

// ensure stores an object unless the store has it.
func (o *objectStore) ensure(kind plumbing.ObjectType, id ObjectID, content []byte) error {
	if o.has(id) {
		return nil
	}
	return o.write(kind, id, content)
}

// write stores an object whose id the caller computed, and checks that the
// store agrees.
func (o *objectStore) write(kind plumbing.ObjectType, id ObjectID, content []byte) error {
	obj := o.s.NewEncodedObject()
	obj.SetType(kind)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write(content); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	got, err := o.s.SetEncodedObject(obj)
	if err != nil {
		return fmt.Errorf("store %s %x: %w", kind, id, err)
	}
	if got != plumbing.Hash(id) {
		return fmt.Errorf("store %s %x: the store computed id %s", kind, id, got)
	}
	return nil
}
