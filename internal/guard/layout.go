package guard

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Layout is what a directory must hold: the regular files Files (by
// slash-separated path, with their content), their parents and the
// directories Dirs,
// and of everything else only the entries Keep says (nil keeps none).
// A repository written afresh for agents to use (an isolated worktree's
// .git, the hook's checkout) is one: whatever they left there goes.
type Layout struct {
	Files map[string][]byte
	Dirs  []string
	Keep  func(rel string, e fs.DirEntry) bool
}

// Apply makes the directory of r hold l. Every entry that is neither
// kept nor what l names it (a directory for Dirs, a regular file for
// Files: never a link) is removed, Dirs are created, and a file is
// written only when its content differs, so a directory already as l
// says costs a few reads.
func (l Layout) Apply(r *os.Root) error {
	dirs := map[string]bool{}
	mkdirs := slices.Clone(l.Dirs)
	for name := range l.Files {
		mkdirs = append(mkdirs, path.Dir(name))
	}
	for _, d := range mkdirs {
		for ; d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	if err := l.prune(r, ".", dirs); err != nil {
		return err
	}
	for _, d := range mkdirs {
		if err := r.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(l.Files)) {
		data := l.Files[name]
		if b, err := workspace.ReadFile(r, name, int64(len(data))); err == nil && bytes.Equal(b, data) {
			continue
		}
		if err := (workspace.Atomic{Perm: 0o644}).Write(r, name, data); err != nil {
			return err
		}
	}
	return nil
}

// prune removes from the directory dir of r what l neither names nor
// keeps, entering the directories it names.
func (l Layout) prune(r *os.Root, dir string, dirs map[string]bool) error {
	entries, err := workspace.ReadDir(r, dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		rel := e.Name()
		if dir != "." {
			rel = dir + "/" + e.Name()
		}
		_, file := l.Files[rel]
		switch {
		case dirs[rel] && e.IsDir():
			if err := l.prune(r, rel, dirs); err != nil {
				return err
			}
		case file && e.Type().IsRegular(), l.Keep != nil && l.Keep(rel, e):
		default:
			if err := r.RemoveAll(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
