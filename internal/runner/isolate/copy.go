package isolate

import (
	"crypto/sha1"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"

	"github.com/loop-action/loop-action/internal/workspace"
)

// copied is the outcome of copying one path from one root to another.
type copied struct {
	st       state
	src, dst statKey // the source as read, the copy as written
}

// copyPath copies name, a regular file or symbolic link whose lstat result
// in src is fi, to the same name in dst, whose parent directories must
// exist. With fresh, dst is known to have nothing there, and a file copy
// keeps the source's modification time: a new worktree has no build
// outputs yet that an old time could make look up to date, and a stat walk
// can trust stat results at once only for files not modified just now (see
// racyWindow). Other copies get the current time, as any edit would.
//
// A regular file of dst with no other hard link is rewritten in place, and
// a missing one is created in place, as git's checkout does: creating a
// file is the costly part of a copy, so writing beside and renaming (which
// also replaces links, directories and files with other hard links) is
// kept for those cases.
func copyPath(src, dst *os.Root, name string, fi fs.FileInfo, fresh bool) (copied, error) {
	var err error
	for range maxAttempts {
		var c copied
		if fi.Mode()&fs.ModeSymlink != 0 {
			c, err = copyLink(src, dst, name, fi, fresh)
		} else {
			c, err = copyFile(src, dst, name, keyOf(fi).ino, fresh)
		}
		if !errors.Is(err, errChanged) {
			return c, err
		}
		if fi, err = src.Lstat(name); err != nil {
			return copied{}, err
		}
	}
	return copied{}, err
}

func copyLink(src, dst *os.Root, name string, fi fs.FileInfo, fresh bool) (copied, error) {
	target, err := src.Readlink(name)
	if err != nil {
		return copied{}, err
	}
	if _, lerr := dst.Lstat(name); fresh || missing(lerr) {
		err = dst.Symlink(target, name)
	} else {
		tmp := tempName(name)
		if err = dst.Symlink(target, tmp); err == nil {
			err = renameOver(dst, tmp, name)
		}
	}
	if err != nil {
		return copied{}, err
	}
	c := copied{st: linkState(target), src: keyOf(fi)}
	c.dst, err = lstatKey(dst, name)
	return c, err
}

// copyFile copies the regular file name, which lstat found with inode ino.
func copyFile(src, dst *os.Root, name string, ino uint64, fresh bool) (copied, error) {
	in, fi, err := workspace.OpenFile(src, name) // never blocks on a FIFO swapped in
	if errors.Is(err, workspace.ErrNotRegular) {
		return copied{}, errChanged // replaced since lstat
	}
	if err != nil {
		return copied{}, err
	}
	defer in.Close()
	c := copied{src: keyOf(fi)}
	if c.src.ino != ino {
		return copied{}, errChanged // replaced since lstat
	}
	out, target, err := openTarget(dst, name, fi.Mode().Perm(), fresh)
	if err != nil {
		return copied{}, err
	}
	h := blobHasher(c.src.size)
	err = pump(out, in, h, c.src.size)
	if err == nil && fresh {
		err = dst.Chtimes(name, fi.ModTime(), fi.ModTime())
	}
	c.st = state{kind: fileKind(fi.Mode()), id: [sha1.Size]byte(h.Sum(nil))}
	return finish(dst, out, target, name, c, err)
}

// openTarget opens the file the copy of name is written to, and returns
// its name: name itself, or a temporary name beside it.
func openTarget(dst *os.Root, name string, perm fs.FileMode, fresh bool) (*os.File, string, error) {
	const create = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if fresh {
		f, err := dst.OpenFile(name, create, perm)
		return f, name, err
	}
	fi, err := dst.Lstat(name)
	if missing(err) {
		f, err := dst.OpenFile(name, create, perm)
		return f, name, err
	}
	if err == nil && fi.Mode().IsRegular() && links(fi) == 1 {
		if f := rewrite(dst, name, fi, perm); f != nil {
			return f, name, nil
		}
	}
	tmp := tempName(name)
	f, err := dst.OpenFile(tmp, create, perm)
	return f, tmp, err
}

// rewrite opens the regular file name (lstat: fi) to be rewritten with
// permissions perm, or returns nil if it cannot (busy, or replaced).
func rewrite(dst *os.Root, name string, fi fs.FileInfo, perm fs.FileMode) *os.File {
	f, err := dst.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	now, err := f.Stat()
	if err == nil && keyOf(now).ino == keyOf(fi).ino && now.Mode().IsRegular() {
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

// finish closes out, the copy written at target, and moves it to name.
// A copy written in place is cut to the size written: it is not truncated
// first, since on ext4 truncating a file to zero and writing it again makes
// close wait for the data to be allocated (auto_da_alloc). A failed copy
// written beside is removed; one written in place is left.
func finish(dst *os.Root, out *os.File, target, name string, c copied, err error) (copied, error) {
	if err == nil && target == name {
		c.dst, err = cut(out, c.src.size)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && target != name {
		if err = renameOver(dst, target, name); err == nil {
			c.dst, err = lstatKey(dst, name)
		}
	}
	if err != nil {
		if target != name {
			_ = dst.Remove(target)
		}
		return copied{}, err
	}
	return c, nil
}

// cut truncates f to size if it is longer, and returns its stat key.
func cut(f *os.File, size int64) (statKey, error) {
	fi, err := f.Stat()
	if err == nil && fi.Size() > size {
		if err = f.Truncate(size); err == nil {
			fi, err = f.Stat()
		}
	}
	if err != nil {
		return statKey{}, err
	}
	return keyOf(fi), nil
}

// renameOver renames from to to, first removing an empty directory at to,
// which rename cannot replace with a file.
func renameOver(r *os.Root, from, to string) error {
	err := r.Rename(from, to)
	if err != nil {
		if fi, lerr := r.Lstat(to); lerr == nil && fi.IsDir() && r.Remove(to) == nil {
			err = r.Rename(from, to)
		}
	}
	if err != nil {
		_ = r.Remove(from)
	}
	return err
}

func lstatKey(r *os.Root, name string) (statKey, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return statKey{}, err
	}
	return keyOf(fi), nil
}

// tempName is a fresh name beside name for a copy being written.
func tempName(name string) string {
	dir, base := path.Split(name)
	return dir + "." + base + ".isolate-" + strconv.FormatUint(rand.Uint64(), 36)
}
