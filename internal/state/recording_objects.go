package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/workspace"
)

// looseObjects is a run's git objects in the dir: store, loose, under
// runs/<id>/objects, read and written only through the store's os.Root:
// each fan-out directory is made a real one before a write (realDir), and
// objects are written whole through workspace.Atomic, which replaces a
// link rather than writing through it. go-git's filesystem storage would
// write through billy, which follows links.
type looseObjects struct {
	d    *Dir
	dir  string
	dirs map[string]bool
}

var _ storer.EncodedObjectStorer = (*looseObjects)(nil)

func (o *looseObjects) name(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(o.dir, s[:2], s[2:])
}

func (o *looseObjects) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

// SetEncodedObject writes obj unless it is there already.
func (o *looseObjects) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	if o.HasEncodedObject(h) == nil {
		return h, nil
	}
	rd, err := obj.Reader()
	if err != nil {
		return h, err
	}
	defer rd.Close()
	var buf bytes.Buffer
	w := objfile.NewWriter(&buf)
	err = w.WriteHeader(obj.Type(), obj.Size())
	if err == nil {
		_, err = io.Copy(w, rd)
	}
	if err = errors.Join(err, w.Close()); err != nil {
		return h, err
	}
	if w.Hash() != h {
		return h, fmt.Errorf("object %s encodes as %s", h, w.Hash())
	}
	name := o.name(h)
	dir := filepath.Dir(name)
	if !o.dirs[dir] {
		if err := o.d.realDir(dir); err != nil {
			return h, err
		}
		o.dirs[dir] = true
	}
	a := workspace.Atomic{Perm: 0o444, Temp: filepath.Join(dir, "."+path.Base(name)+".tmp")}
	if err := a.Write(o.d.root, name, buf.Bytes()); err != nil {
		return h, fmt.Errorf("write object %s: %w", h, err)
	}
	return h, nil
}

// EncodedObject reads object h, checking that it hashes to h.
func (o *looseObjects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	data, err := o.d.readFile(o.name(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	r, err := objfile.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	typ, size, err := r.Header()
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, plumbing.ErrObjectNotFound
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(typ)
	obj.SetSize(size)
	if _, err := io.Copy(obj, io.LimitReader(r, size)); err != nil {
		return nil, err
	}
	if obj.Hash() != h {
		return nil, fmt.Errorf("object %s is corrupt", h)
	}
	return obj, nil
}

func (o *looseObjects) HasEncodedObject(h plumbing.Hash) error {
	fi, err := o.d.root.Lstat(o.name(h))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

func (o *looseObjects) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	obj, err := o.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, err
	}
	return obj.Size(), nil
}

func (o *looseObjects) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errors.New("a run's loose objects are not listed")
}

func (o *looseObjects) AddAlternate(string) error {
	return errors.New("a run's loose objects have no alternates")
}
