package isolate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// dirCheck tells whether the parents of paths in a root are real
// directories, remembering the answers for one operation. [os.Root]
// follows symbolic links that stay inside the root; a snapshot does not,
// so a path below a link is not a path of the tree.
type dirCheck struct {
	r    *os.Root
	real map[string]bool
}

func newDirCheck(r *os.Root) *dirCheck {
	return &dirCheck{r: r, real: map[string]bool{"": true}}
}

// parentsReal reports whether every parent directory of p exists and is
// a directory, not a symbolic link.
func (d *dirCheck) parentsReal(p string) (bool, error) {
	return d.isDir(path.Dir(p))
}

func (d *dirCheck) isDir(dir string) (bool, error) {
	if dir == "." {
		dir = ""
	}
	if ok, seen := d.real[dir]; seen {
		return ok, nil
	}
	ok, err := d.isDir(path.Dir(dir))
	if err != nil || !ok {
		return false, err
	}
	fi, err := d.r.Lstat(dir)
	switch {
	case missing(err):
		ok = false
	case err != nil:
		return false, err
	default:
		ok = fi.IsDir()
	}
	d.real[dir] = ok
	return ok, nil
}

// made records that dir was just created (with its parents).
func (d *dirCheck) made(dir string) {
	for ; dir != ""; dir = parent(dir) {
		d.real[dir] = true
	}
}

// forget drops what is known about dir and below, after it changed.
func (d *dirCheck) forget(dir string) {
	for k := range d.real {
		if k == dir || strings.HasPrefix(k, dir+"/") {
			delete(d.real, k)
		}
	}
}

// missing reports whether err says a path does not exist, or that one of
// its parents is not a directory.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// lstat returns the lstat result of p in the root, or nil if p is not
// there as a path of the tree (missing, or below a non-directory).
func (d *dirCheck) lstat(p string) (fs.FileInfo, error) {
	ok, err := d.parentsReal(p)
	if err != nil || !ok {
		return nil, err
	}
	fi, err := d.r.Lstat(p)
	if missing(err) {
		return nil, nil
	}
	return fi, err
}

// checkNode refuses node names that are not a single plain path component;
// names starting with a dot are reserved for the Manager's own use.
func checkNode(node string) error {
	if node == "" || strings.ContainsAny(node, `/\`+"\x00") || strings.HasPrefix(node, ".") {
		return fmt.Errorf("node name %q cannot name a worktree directory", node)
	}
	return nil
}
