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

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := o.ObjectStorage.EncodedObject(t, h)
	for _, b := range o.bases {
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		obj, err = b.EncodedObject(t, h)
	}
	return obj, err
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	err := o.ObjectStorage.HasEncodedObject(h)
	for _, b := range o.bases {
		if err == nil {
			break
		}
		err = b.HasEncodedObject(h)
	}
	return err
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	size, err := o.ObjectStorage.EncodedObjectSize(h)
	for _, b := range o.bases {
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		size, err = b.EncodedObjectSize(h)
	}
	return size, err
}

// IterEncodedObjects lists the objects in memory only: nothing here walks
// the repository.
func (o *overlay) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return o.ObjectStorage.IterEncodedObjects(t)
}

var _ storer.EncodedObjectStorer = (*overlay)(nil)
