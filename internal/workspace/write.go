package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// ErrParent is wrapped by the errors of a [Writer] whose path has a parent
// that is a symbolic link (wherever it points) or a file.
var ErrParent = errors.New("not a real directory")

// Writer is the one way loop-action writes into a loop root outside .loop:
// the runner's reverts ([Writer.Put], [Writer.Remove]), what isolated
// nodes publish ([Writer.Copy]) and [Restore].
//
// Paths are slash-separated, relative and clean; nothing is written below
// the root's .loop ([ErrLoopPath]). A path is resolved one component at a
// time, each parent checked by lstat to be a real directory and opened
// only if it is the one checked, so nothing is written through a symbolic
// link or outside the root. A parent that is a link or a file is an error
// wrapping [ErrParent]; only [Writer.Put], which puts back a recorded
// state, replaces it with a directory (removing the link itself, never
// what it points to). Missing parents are created (0755). Files and links
// are written beside their path and renamed into place: a reader never
// sees half a file, and what was there is replaced, not written through.
// A Writer is safe for concurrent use on distinct paths.
type Writer struct {
	root *os.Root
}

// OpenWriter opens a Writer on the loop root root.
func OpenWriter(root string) (*Writer, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open loop root %q: %w", root, err)
	}
	return &Writer{root: r}, nil
}

// Close releases the loop root.
func (w *Writer) Close() error { return w.root.Close() }

// WriteFile makes rel a regular file holding data, with perm whatever the
// umask.
func (w *Writer) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	_, err := w.put(rel, Entry{Mode: perm & modeBits, Data: data}, create)
	return err
}

// Symlink makes rel a symbolic link to target, never resolved.
func (w *Writer) Symlink(rel, target string) error {
	_, err := w.put(rel, Entry{Mode: fs.ModeSymlink | 0o777, Data: []byte(target)}, create)
	return err
}

// Remove deletes whatever rel is, a directory with everything in it, a
// link itself. A missing path, or parent, is no error.
func (w *Writer) Remove(rel string) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	d, name, _, err := w.parent(rel, existing)
	if d == nil || err != nil {
		return wrapOp("remove", rel, err)
	}
	defer d.close()
	if err := d.r.RemoveAll(name); err != nil {
		return wrapOp("remove", rel, err)
	}
	return nil
}

// parentMode is what [Writer.parent] does with a parent that is missing
// or not a real directory.
type parentMode int

const (
	existing parentMode = iota // a missing parent: no directory; not a real one: an error
	create                     // create missing parents; not a real one: an error
	reclaim                    // create missing parents, replace those that are not real ones
)

// parent opens the directory holding rel's last component, and returns it
// with that name and the parents it replaced. With existing, a missing
// parent gives a nil directory and no error.
func (w *Writer) parent(rel string, how parentMode) (*dirList, string, []Replaced, error) {
	parts := strings.Split(rel, "/")
	d := &dirList{r: w.root}
	var replaced []Replaced
	for i, name := range parts[:len(parts)-1] {
		at := strings.Join(parts[:i+1], "/")
		fi, rep, err := realDir(d.r, name, at, how)
		if rep != nil {
			replaced = append(replaced, *rep)
		}
		if fi == nil || err != nil {
			d.close()
			return nil, "", replaced, err
		}
		sub, err := openSame(d.r, name, fi)
		d.close()
		if err != nil {
			return nil, "", replaced, fmt.Errorf("open %q: %w", at, err)
		}
		d = &dirList{r: sub, own: true}
	}
	return d, parts[len(parts)-1], replaced, nil
}

// realDir makes the child name of r (at, from the loop root) a real
// directory as how says, and returns its lstat result (nil: missing, with
// existing).
func realDir(r *os.Root, name, at string, how parentMode) (fs.FileInfo, *Replaced, error) {
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		if how == existing {
			return nil, nil, nil
		}
		if err := r.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("create %q: %w", at, err)
		}
		fi, err = r.Lstat(name)
	}
	if err != nil {
		return nil, nil, err
	}
	if fi.IsDir() {
		return fi, nil, nil
	}
	if how != reclaim {
		return nil, nil, fmt.Errorf("parent %q is %s: %w", at, kindOf(fi.Mode()), ErrParent)
	}
	rep := &Replaced{Path: at, Mode: fi.Mode()}
	if fi.Mode()&fs.ModeSymlink != 0 {
		rep.Target, _ = r.Readlink(name)
	}
	if err := r.Remove(name); err != nil {
		return nil, nil, fmt.Errorf("remove %q, %s: %w", at, kindOf(fi.Mode()), err)
	}
	if err := r.Mkdir(name, 0o755); err != nil {
		return nil, rep, fmt.Errorf("create %q: %w", at, err)
	}
	fi, err = r.Lstat(name)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%q changed while it was replaced: %w", at, ErrParent)
	}
	return fi, rep, err
}

// openSame opens the directory name of r, checked to be the one lstat
// found (fi): [os.Root] would follow a link swapped in since; a named pipe
// swapped in is refused, never waited on.
func openSame(r *os.Root, name string, fi fs.FileInfo) (*os.Root, error) {
	sub, err := OpenDir(r, name)
	if err != nil {
		return nil, err
	}
	now, err := sub.Stat(".")
	if err == nil && !os.SameFile(fi, now) {
		err = fmt.Errorf("changed while it was opened: %w", ErrParent)
	}
	if err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// checkRel refuses a path that is not slash-separated, relative and clean.
// A backslash is an ordinary character of a name, as it is to git and to
// the system: agents may create such files, and they are paths of the tree.
func checkRel(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\x00") {
		return fmt.Errorf("%q is not a path inside the loop root", rel)
	}
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("%q is not a path inside the loop root", rel)
		}
	}
	return nil
}

// ErrLoopPath is wrapped by the error of a [Writer] asked to write below
// the root's .loop ([IsLoop]): loop-action's state is never written from
// a tree.
var ErrLoopPath = errors.New("loop-action's own .loop")

// checkWrite is checkRel for a path to write: never below .loop.
func checkWrite(rel string) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	if top, _, _ := strings.Cut(rel, "/"); IsLoop(top) {
		return fmt.Errorf("write %q: it is in %w", rel, ErrLoopPath)
	}
	return nil
}

// kindOf names the kind of a mode, for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a file"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

func wrapOp(op, rel string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %q: %w", op, rel, err)
}
