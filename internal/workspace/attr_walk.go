package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// IsLoop reports whether a top-level entry named name is loop-action's
// .loop to a file system that folds case or ignores trailing dots and
// spaces: it is never snapshotted, restored, written or delivered.
func IsLoop(name string) bool {
	return strings.EqualFold(strings.TrimRight(name, ". "), ".loop") || strings.EqualFold(name, "loop~1")
}

// convs is how one file converts as `git add` reads its attributes (in)
// and as a checkout does (out), which differ when an attributes file has
// a BOM, a NUL or a CR, or is ignored.
type convs struct{ in, out conv }

func (c convs) converts() bool { return c.in.converts() || c.out.converts() }

// convs returns how the file at rel, in the directory at hand, converts.
func (w *walker) convs(rel string) convs {
	w.abuf = w.in.attrs(rel, w.abuf)
	in := convOf(w.abuf, w.k)
	if sameStacks(w.in, w.out) {
		return convs{in, in}
	}
	w.abuf = w.out.attrs(rel, w.abuf)
	return convs{in, convOf(w.abuf, w.k)}
}

func sameStacks(a, b attrStack) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// attributes pushes the .gitattributes of directory l, at path, on the
// walk's stacks: git add's, and the checkout's unless it is ignored (no
// commit carries it).
func (w *walker) attributes(l *dirList, path []string, entries []dirEntry, rules []rule) error {
	if w.mode == listing {
		return nil
	}
	i := slices.IndexFunc(entries, func(e dirEntry) bool { return e.name == ".gitattributes" })
	if i < 0 || (entries[i].typ != 0 && entries[i].typ != fs.ModeSymlink) {
		return nil
	}
	dir := strings.Join(path, "/")
	in, out, err := w.readAttrs(l.r, dir)
	if err != nil {
		return err
	}
	if in == nil {
		return nil
	}
	w.in = w.in.push(in)
	if !ignored(rules, append(path, ".gitattributes"), false) { // in place: see eachEntry
		w.out = w.out.push(out)
	}
	return nil
}

// readAttrs reads the .gitattributes of directory r, at dir, as `git add`
// reads it (a file, or a link's target) and as a checkout does (its blob).
func (w *walker) readAttrs(r *os.Root, dir string) (in, out *attrFile, err error) {
	fi, err := r.Lstat(".gitattributes")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	rel := join(dir, ".gitattributes")
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := r.Readlink(".gitattributes")
		if err != nil {
			return nil, nil, err
		}
		f := parseAttrs([]byte(target), dir, false)
		return f, f, nil
	case !fi.Mode().IsRegular():
		return nil, nil, nil
	case fi.Size() >= attrMaxFile:
		f := parseAttrs(nil, dir, true) // ignored, as git does
		return f, f, nil
	}
	data, err := ReadFile(r, ".gitattributes", attrMaxFile)
	if errors.Is(err, ErrNotRegular) || errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil // replaced since lstat
	}
	if err != nil {
		return nil, nil, err
	}
	in = parseAttrs(data, dir, true)
	stack := w.in.push(in)
	blob := data
	if c := convOf(stack.attrs(rel, nil), w.k); c.converts() {
		if blob, err = w.k.clean(data, c, func() (bool, error) {
			b, ok, err := w.base.Blob(rel)
			return ok && hasCRLF(b), err
		}); err != nil {
			return nil, nil, err
		}
	}
	if bytes.Equal(blob, data) && !bytes.HasPrefix(data, utf8BOM) && !bytes.ContainsAny(data, "\r\x00") {
		return in, in, nil
	}
	return in, parseAttrs(blob, dir, false), nil
}
