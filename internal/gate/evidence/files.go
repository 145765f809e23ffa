package evidence

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Look examines path, relative to root, without ever reading outside root:
// every read goes through an [os.Root], so a path that leaves it, directly
// or through a symlink (one swapped in during the look included), is
// reported and not read. With read set, a file's content is read up to
// ReadLimit bytes. A path that is neither a regular file nor a directory
// (a FIFO, a socket, a device) is reported as not a regular file and never
// opened.
func Look(root, path string, read bool) gate.FileResult {
	r := gate.FileResult{Path: path, ReadLimit: ReadLimit}
	name := filepath.Clean(filepath.FromSlash(path))
	if !filepath.IsLocal(name) {
		r.Escapes = path
		return r
	}
	rt, err := workspace.OpenRoot(root)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer rt.Close()
	info, err := rt.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r
	case err != nil:
		return failed(r, rt, name, err)
	}
	r.Exists = true
	switch {
	case info.IsDir():
		r.Dir = true
		var entries []fs.DirEntry
		if entries, err = workspace.ReadDir(rt, name); err != nil {
			return failed(r, rt, name, err)
		}
		r.Entries = len(entries)
	case !info.Mode().IsRegular():
		r.Err = workspace.ErrNotRegular.Error()
	default:
		r.Size = info.Size()
		if read {
			r.Content, r.TooLarge, err = readCapped(rt, name)
			if err != nil {
				return failed(r, rt, name, err)
			}
		}
	}
	return r
}

// failed is r once looking at name in rt failed with err: a path that
// leads out of the root is reported with the target of the symbolic link
// that leads it there, anything else as the error.
func failed(r gate.FileResult, rt *os.Root, name string, err error) gate.FileResult {
	if !workspace.Escapes(err) {
		r.Err = trimPathError(err)
		return r
	}
	r = gate.FileResult{Path: r.Path, ReadLimit: r.ReadLimit, Escapes: r.Path}
	prefix := ""
	for _, part := range strings.Split(name, string(filepath.Separator)) {
		prefix = filepath.Join(prefix, part)
		if _, err := rt.Stat(prefix); workspace.Escapes(err) {
			if target, err := rt.Readlink(prefix); err == nil {
				r.Escapes = target
			}
			break
		}
	}
	return r
}

// readCapped reads a regular file of at most ReadLimit bytes.
func readCapped(rt *os.Root, name string) ([]byte, bool, error) {
	b, err := workspace.ReadFile(rt, name, ReadLimit)
	if errors.Is(err, workspace.ErrTooLarge) {
		return nil, true, nil
	}
	return b, false, err
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
