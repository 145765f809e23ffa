package isolate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loop-action/loop-action/internal/workspace"
)

// objectWriter writes loose objects into a node's own object directory,
// .git/objects of its worktree, through the worktree's root: nothing is
// written through a symbolic link, and nothing outside the worktree.
// go-git's objfile encodes them; its filesystem storage would write
// through billy, which follows links.
type objectWriter struct {
	r    *os.Root
	dirs map[string]bool // fan-out directories known to be real
	seq  int             // names temporary files
}

// has reports whether the node's object directory holds a loose object id.
func (o *objectWriter) has(id plumbing.Hash) bool {
	fi, err := o.r.Lstat(o.name(id))
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

func (o *objectWriter) name(id plumbing.Hash) string {
	h := id.String()
	return ".git/objects/" + h[:2] + "/" + h[2:]
}

// put writes obj unless it is there already.
func (o *objectWriter) put(obj *plumbing.MemoryObject) (plumbing.Hash, error) {
	id := obj.Hash()
	if o.has(id) {
		return id, nil
	}
	rd, err := obj.Reader()
	if err != nil {
		return id, err
	}
	got, err := o.write(obj.Type(), obj.Size(), rd)
	if err == nil && got != id {
		err = fmt.Errorf("object %s written as %s", id, got)
	}
	return id, err
}

// write writes an object of type t and size read from rd, and returns its
// id: compressed into a temporary file of the object directory as it is
// read (a large file is never held in memory), then renamed into place.
func (o *objectWriter) write(t plumbing.ObjectType, size int64, rd io.Reader) (id plumbing.Hash, err error) {
	o.seq++
	tmp := fmt.Sprintf(".git/objects/tmp_obj_%d", o.seq)
	if err := o.r.RemoveAll(tmp); err != nil { // whatever the node left there
		return id, err
	}
	f, err := o.r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o444)
	if err != nil {
		return id, err
	}
	defer func() {
		if err != nil {
			o.r.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	w := objfile.NewWriter(bw)
	err = w.WriteHeader(t, size)
	if err == nil {
		var n int64
		n, err = io.Copy(w, io.LimitReader(rd, size+1))
		if err == nil && n != size {
			err = fmt.Errorf("read %d bytes of %d", n, size)
		}
	}
	if err = errors.Join(err, w.Close(), bw.Flush(), f.Close()); err != nil {
		return id, err
	}
	id = w.Hash()
	if err := o.fanOut(id); err != nil {
		return id, err
	}
	return id, o.r.Rename(tmp, o.name(id))
}

// fanOut makes sure the directory id's object goes into is a real one.
func (o *objectWriter) fanOut(id plumbing.Hash) error {
	dir := path.Dir(o.name(id))
	if o.dirs[dir] {
		return nil
	}
	if fi, err := o.r.Lstat(dir); err == nil && !fi.IsDir() {
		if err := o.r.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := o.r.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	o.dirs[dir] = true
	return nil
}

// blob writes the blob of the worktree's file or link p, which must hold
// want; false if it does not (the node changed it).
func (o *objectWriter) blob(p string, want state) (bool, error) {
	fi, err := o.r.Lstat(p)
	if missing(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var rd io.Reader
	size := fi.Size()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := o.r.Readlink(p)
		if err != nil {
			return false, err
		}
		rd, size = strings.NewReader(target), int64(len(target))
	case fi.Mode().IsRegular():
		f, err := o.r.OpenFile(p, os.O_RDONLY|oNoFollow|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false, err
		}
		defer f.Close()
		rd = f
	default:
		return false, nil
	}
	id, err := o.write(plumbing.BlobObject, size, rd)
	if err != nil || workspace.ObjectID(id) == want.id {
		return err == nil, err
	}
	return false, o.r.Remove(o.name(id)) // not the base: the node's own content
}

// treeDir is one directory of a tree being written.
type treeDir struct {
	entries []object.TreeEntry
	dirs    map[string]*treeDir
}

// add adds the file p with mode and id below d.
func (d *treeDir) add(p string, mode filemode.FileMode, id plumbing.Hash) {
	for {
		dir, rest, ok := strings.Cut(p, "/")
		if !ok {
			d.entries = append(d.entries, object.TreeEntry{Name: p, Mode: mode, Hash: id})
			return
		}
		if d.dirs == nil {
			d.dirs = map[string]*treeDir{}
		}
		sub := d.dirs[dir]
		if sub == nil {
			sub = &treeDir{}
			d.dirs[dir] = sub
		}
		d, p = sub, rest
	}
}

// write writes d's tree and those below it, and returns its id.
func (d *treeDir) write(o *objectWriter) (plumbing.Hash, error) {
	entries := d.entries
	for name, sub := range d.dirs {
		id, err := sub.write(o)
		if err != nil {
			return id, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: id})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	obj := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}
