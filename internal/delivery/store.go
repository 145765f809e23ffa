package delivery

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
)

// overlay is the object store of one delivery: what it creates lives in
// memory, over the stores it reads (the loop root's repository, and for
// Apply the state branch's), which it never writes.
type overlay struct {
	*memory.ObjectStorage
	bases []storer.EncodedObjectStorer
}

func newOverlay(bases ...storer.EncodedObjectStorer) *overlay {
	mem := memory.NewStorage()
	return &overlay{ObjectStorage: &mem.ObjectStorage, bases: bases}
}

// SetEncodedObject keeps obj in memory unless a store has it.
func (o *overlay) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	if o.HasEncodedObject(h) == nil {
		return h, nil
	}
	return o.ObjectStorage.SetEncodedObject(obj)
}

// find asks memory, then each store in turn while the object is not found.
func find[T any](o *overlay, get func(storer.EncodedObjectStorer) (T, error)) (T, error) {
	v, err := get(o.ObjectStorage)
	for _, b := range o.bases {
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		v, err = get(b)
	}
	return v, err
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	return find(o, func(s storer.EncodedObjectStorer) (plumbing.EncodedObject, error) { return s.EncodedObject(t, h) })
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	_, err := find(o, func(s storer.EncodedObjectStorer) (struct{}, error) { return struct{}{}, s.HasEncodedObject(h) })
	return err
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	return find(o, func(s storer.EncodedObjectStorer) (int64, error) { return s.EncodedObjectSize(h) })
}

// IterEncodedObjects lists the objects in memory only: nothing here walks
// the repository.
func (o *overlay) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return o.ObjectStorage.IterEncodedObjects(t)
}

var _ storer.EncodedObjectStorer = (*overlay)(nil)
