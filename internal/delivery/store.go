package delivery

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
)

// overlay is the object store of one delivery: what it creates lives in
// memory, over the loop root's repository, which it reads and never
// writes.
type overlay struct {
	*memory.ObjectStorage
	base storer.EncodedObjectStorer
}

func newOverlay(base storer.EncodedObjectStorer) *overlay {
	mem := memory.NewStorage()
	return &overlay{ObjectStorage: &mem.ObjectStorage, base: base}
}

// SetEncodedObject keeps obj in memory unless the repository has it.
func (o *overlay) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	if h := obj.Hash(); o.base.HasEncodedObject(h) == nil {
		return h, nil
	}
	return o.ObjectStorage.SetEncodedObject(obj)
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := o.ObjectStorage.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return o.base.EncodedObject(t, h)
	}
	return obj, err
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if o.ObjectStorage.HasEncodedObject(h) == nil {
		return nil
	}
	return o.base.HasEncodedObject(h)
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	size, err := o.ObjectStorage.EncodedObjectSize(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return o.base.EncodedObjectSize(h)
	}
	return size, err
}

// IterEncodedObjects lists the objects in memory only: nothing here walks
// the repository.
func (o *overlay) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return o.ObjectStorage.IterEncodedObjects(t)
}

var _ storer.EncodedObjectStorer = (*overlay)(nil)
