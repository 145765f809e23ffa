package evidence

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Look examines path, relative to root, without ever reading outside root:
// a path that leaves it, directly or through a symlink, is reported and not
// read. With read set, a file's content is read up to ReadLimit bytes. A
// path that is neither a regular file nor a directory (a FIFO, a socket, a
// device) is reported as not a regular file and never opened.
func Look(root, path string, read bool) gate.FileResult {
	r := gate.FileResult{Path: path, ReadLimit: ReadLimit}
	if target, escapes := escapesRoot(root, path); escapes {
		r.Escapes = cmp.Or(target, path)
		return r
	}
	rt, err := workspace.OpenRoot(root)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer rt.Close()
	info, err := rt.Stat(filepath.FromSlash(path))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r
	case err != nil:
		r.Err = trimPathError(err)
		return r
	}
	r.Exists = true
	switch {
	case info.IsDir():
		r.Dir = true
		r.Entries, r.Err = countEntries(rt, path)
	case !info.Mode().IsRegular():
		r.Err = workspace.ErrNotRegular.Error()
	default:
		r.Size = info.Size()
		if read {
			r.Content, r.TooLarge, r.Err = readCapped(rt, path)
		}
	}
	return r
}

// escapesRoot reports whether path leads outside root: by itself (".."
// or absolute) or through a symlink, whose target it then returns.
func escapesRoot(root, path string) (string, bool) {
	clean := filepath.Clean(filepath.FromSlash(path))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", true
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false
	}
	prefix := root
	for _, part := range strings.Split(clean, string(filepath.Separator)) {
		prefix = filepath.Join(prefix, part)
		info, err := os.Lstat(prefix)
		if err != nil {
			return "", false // missing: reported as not existing
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, _ := os.Readlink(prefix)
		real, err := filepath.EvalSymlinks(prefix)
		if err != nil { // broken: judge where it points by its text
			real = target
			if !filepath.IsAbs(real) {
				real = filepath.Join(filepath.Dir(prefix), real)
			}
			realRoot = root
		}
		if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return target, true
		}
	}
	return "", false
}

func countEntries(rt *os.Root, path string) (int, string) {
	sub, err := workspace.OpenDir(rt, filepath.FromSlash(path))
	if err != nil {
		return 0, trimPathError(err)
	}
	defer sub.Close()
	f, err := sub.Open(".")
	if err != nil {
		return 0, trimPathError(err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, trimPathError(err)
	}
	return len(names), ""
}

// readCapped reads a regular file of at most ReadLimit bytes.
func readCapped(rt *os.Root, path string) ([]byte, bool, string) {
	b, err := workspace.ReadFile(rt, filepath.FromSlash(path), ReadLimit)
	switch {
	case errors.Is(err, workspace.ErrTooLarge):
		return nil, true, ""
	case err != nil:
		return nil, false, trimPathError(err)
	}
	return b, false, ""
}

// trimPathError drops the operation and absolute path from an error, so an
// evidence line names only the relative path it is about.
func trimPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
