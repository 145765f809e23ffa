package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Copied is what a copy of a file or symbolic link copied.
type Copied struct {
	ID   ObjectID    // the blob id of what was copied: a file's content, a link's target text
	Mode fs.FileMode // the source's mode as read: a regular file's, or a symbolic link's
	Src  StatKey     // the source as read
	Dst  StatKey     // the copy as written
}

// CopyNew copies name, a regular file or symbolic link of src (lstat:
// fi), to name in dst, whose parents must exist: created exclusively, so
// nothing there is written through. It keeps the source's mtime: a new
// tree has no build outputs an old time could make look up to date, and
// a stat cache trusts at once only files not modified just now.
func CopyNew(ctx context.Context, src, dst *os.Root, name string, fi fs.FileInfo) (Copied, error) {
	return copyEntry(ctx, src, name, fi, dst, name, true)
}

// Copy makes rel a copy of the regular file or symbolic link rel of src
// (lstat: fi), reading only the file lstat found, never blocking on a
// named pipe, and stopping when ctx is done. rel is resolved as every
// Writer path is. A file at rel with no other hard link is rewritten in
// place, as git's checkout does (creating a file is the costly part);
// anything else there is replaced by a copy renamed into place. The copy
// gets the current time, as any edit would.
func (w *Writer) Copy(ctx context.Context, rel string, src *os.Root, fi fs.FileInfo) (Copied, error) {
	if err := checkWrite(rel); err != nil {
		return Copied{}, err
	}
	d, name, _, err := w.parent(rel, create)
	if err != nil {
		return Copied{}, wrapOp("copy", rel, err)
	}
	defer d.close()
	c, err := copyEntry(ctx, src, rel, fi, d.r, name, false)
	return c, wrapOp("copy", rel, err)
}

// copyEntry copies srcName of src (lstat: fi) to name in dst, again if
// the source changes meanwhile; fresh says dst has nothing there.
func copyEntry(ctx context.Context, src *os.Root, srcName string, fi fs.FileInfo, dst *os.Root, name string, fresh bool) (Copied, error) {
	first := true
	return retry(src, srcName, fi, func(fi fs.FileInfo) (Copied, error) {
		fresh, first = fresh && first, false // a failed attempt may have left a copy
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return copyLink(src, srcName, fi, dst, name, fresh)
		case fi.Mode().IsRegular():
			return copyFile(ctx, src, srcName, fi, dst, name, fresh)
		}
		return Copied{}, &fs.PathError{Op: "copy", Path: srcName, Err: ErrNotRegular}
	})
}

func copyLink(src *os.Root, srcName string, fi fs.FileInfo, dst *os.Root, name string, fresh bool) (Copied, error) {
	target, err := src.Readlink(srcName)
	if err != nil {
		return Copied{}, err
	}
	if _, lerr := dst.Lstat(name); fresh || missing(lerr) {
		err = dst.Symlink(target, name)
	} else {
		err = putLink(dst, name, target, create)
	}
	if err != nil {
		return Copied{}, err
	}
	c := Copied{ID: LinkID(target), Mode: fi.Mode(), Src: KeyOf(fi)}
	c.Dst, err = lstatKey(dst, name)
	return c, err
}

// copyFile copies the regular file srcName, hashing it as it goes.
func copyFile(ctx context.Context, src *os.Root, srcName string, fi fs.FileInfo, dst *os.Root, name string, fresh bool) (Copied, error) {
	in, now, err := openRegular(src, srcName, fi)
	if err != nil {
		return Copied{}, err
	}
	defer in.Close()
	c := Copied{Mode: now.Mode(), Src: KeyOf(now)}
	out, target, err := openTarget(dst, name, now.Mode().Perm(), fresh)
	if err != nil {
		return Copied{}, err
	}
	h := blobHash(now.Size())
	err = pump(ctx, out, in, h, now.Size())
	if err == nil && fresh {
		err = dst.Chtimes(name, now.ModTime(), now.ModTime())
	}
	c.ID = ObjectID(h.Sum(nil))
	return finish(dst, out, target, name, c, now.Size(), err)
}

// openTarget opens the file the copy is written to: name, or a temporary
// name beside it, which it returns.
func openTarget(dst *os.Root, name string, perm fs.FileMode, fresh bool) (*os.File, string, error) {
	target := name
	if !fresh {
		fi, err := dst.Lstat(name)
		if err == nil && fi.Mode().IsRegular() && links(fi) == 1 {
			if f := rewrite(dst, name, fi, perm); f != nil {
				return f, name, nil
			}
		}
		if !missing(err) {
			target = TempName(name)
		}
	}
	f, err := dst.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	return f, target, err
}

// rewrite opens the regular file name (lstat: fi) to be rewritten with
// perm, or returns nil: busy, or replaced since (a link or a named pipe
// is never waited on nor written).
func rewrite(dst *os.Root, name string, fi fs.FileInfo, perm fs.FileMode) *os.File {
	f, err := dst.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	now, err := f.Stat()
	if err == nil && now.Mode().IsRegular() && os.SameFile(fi, now) {
		if now.Mode().Perm() != perm {
			err = f.Chmod(perm)
		}
		if err == nil {
			return f
		}
	}
	f.Close()
	return nil
}

// finish closes out, the copy at target, and moves it to name. One written
// in place is cut to size, not truncated first: on ext4, truncating to
// zero and writing again makes close wait (auto_da_alloc). A failed copy
// beside is removed; one in place is left.
func finish(dst *os.Root, out *os.File, target, name string, c Copied, size int64, err error) (Copied, error) {
	if err == nil && target == name {
		c.Dst, err = cut(out, size)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && target != name {
		if err = replace(dst, target, name, create); err == nil {
			c.Dst, err = lstatKey(dst, name)
		}
	}
	if err != nil {
		if target != name {
			_ = dst.Remove(target)
		}
		return Copied{}, err
	}
	return c, nil
}

// cut truncates f to size if it is longer, and returns its stat key.
func cut(f *os.File, size int64) (StatKey, error) {
	fi, err := f.Stat()
	if err == nil && fi.Size() > size {
		if err = f.Truncate(size); err == nil {
			fi, err = f.Stat()
		}
	}
	if err != nil {
		return StatKey{}, err
	}
	return KeyOf(fi), nil
}

func lstatKey(r *os.Root, name string) (StatKey, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return StatKey{}, err
	}
	return KeyOf(fi), nil
}

// missing reports whether err says a path or a parent is not there.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
