package evidence

import (
	"cmp"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/gate"
)

// Look examines path, relative to root, without ever reading outside root:
// a path that leaves it, directly or through a symlink, is reported and not
// read. With read set, a file's content is read up to ReadLimit bytes.
func Look(root, path string, read bool) gate.FileResult {
	r := gate.FileResult{Path: path, ReadLimit: ReadLimit}
	if target, escapes := escapesRoot(root, path); escapes {
		r.Escapes = cmp.Or(target, path)
		return r
	}
	rt, err := os.OpenRoot(root)
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
	r.Exists, r.Dir, r.Size = true, info.IsDir(), info.Size()
	if r.Dir {
		r.Size = 0
		r.Entries, r.Err = countEntries(rt, path)
		return r
	}
	if read {
		r.Content, r.TooLarge, r.Err = readCapped(rt, path)
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
	f, err := rt.Open(filepath.FromSlash(path))
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

func readCapped(rt *os.Root, path string) ([]byte, bool, string) {
	f, err := rt.Open(filepath.FromSlash(path))
	if err != nil {
		return nil, false, trimPathError(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, ReadLimit+1))
	if err != nil {
		return nil, false, trimPathError(err)
	}
	if len(b) > ReadLimit {
		return nil, true, ""
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
