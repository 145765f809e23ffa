package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// source is the set of loop-root files that go into out/.
type source struct {
	root  *os.Root // the loop root; nil when there is nothing to copy
	files []string // slash-separated paths relative to the root, sorted
}

func (s *source) close() {
	if s.root != nil {
		s.root.Close()
	}
}

// collect finds the regular files under root that match any of the
// [export] paths patterns (doublestar globs relative to root; a pattern
// that matches a directory takes everything under it). It never follows a
// symlink, never enters .git/ or .loop/, and skips the export being
// written (dirName and its temporary siblings, when parent is inside root).
func collect(root string, patterns []string, parent, dirName string) (*source, error) {
	if len(patterns) == 0 {
		return &source{}, nil
	}
	if root == "" {
		return nil, errors.New("no loop root to match [export] paths in")
	}
	pats, err := cleanPatterns(patterns)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open the loop root: %w", err)
	}
	s := &source{root: r}
	self := selfSkipper(root, parent, dirName)
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
			return nil
		case metadata(d.Name()):
			return skip(d)
		case d.IsDir():
			if self(p) || !mayMatchUnder(pats, p) {
				return fs.SkipDir
			}
		case d.Type().IsRegular() && matches(pats, p):
			s.files = append(s.files, p)
		}
		return nil // symlinks, devices, sockets and pipes are never copied
	})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("match [export] paths in %q: %w", root, err)
	}
	return s, nil
}

// cleanPatterns validates the patterns and drops a leading "./".
func cleanPatterns(patterns []string) ([]string, error) {
	pats := make([]string, 0, len(patterns))
	for _, p := range patterns {
		for strings.HasPrefix(p, "./") {
			p = p[2:]
		}
		if p == "" || !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("export.paths: %q is not a valid glob pattern", p)
		}
		pats = append(pats, p)
	}
	return pats, nil
}

// metadata reports whether a directory entry belongs to git or to
// loop-action's own state, which an export never carries.
func metadata(name string) bool { return name == ".git" || name == ".loop" }

func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// matches reports whether p, or a directory above it, matches a pattern.
func matches(pats []string, p string) bool {
	for q := p; q != "."; q = path.Dir(q) {
		for _, pat := range pats {
			if doublestar.MatchUnvalidated(pat, q) {
				return true
			}
		}
	}
	return false
}

// mayMatchUnder reports whether a file under the directory dir could match
// one of the patterns: the directory and the pattern's literal base lie on
// the same branch.
func mayMatchUnder(pats []string, dir string) bool {
	for _, pat := range pats {
		base, _ := doublestar.SplitPattern(pat)
		if base == "." || base == dir || strings.HasPrefix(base, dir+"/") || strings.HasPrefix(dir, base+"/") {
			return true
		}
	}
	return false
}

// selfSkipper returns a test for the directories of the export itself,
// relative to root: parent/dirName and the temporary directories Write
// builds beside it. Without it, "**" would copy the previous export into
// the new one.
func selfSkipper(root, parent, dirName string) func(string) bool {
	rel, ok := within(root, parent)
	if !ok {
		return func(string) bool { return false }
	}
	return func(p string) bool {
		if path.Dir(p) != rel {
			return false
		}
		name := path.Base(p)
		return name == dirName || strings.HasPrefix(name, "."+dirName+tmpMarker)
	}
}

// within returns dir relative to root, slash-separated, when dir is root or
// inside it.
func within(root, dir string) (string, bool) {
	root, dir = resolve(root), resolve(dir)
	rel, err := filepath.Rel(root, dir)
	if err != nil || !(rel == "." || filepath.IsLocal(rel)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// resolve makes p absolute and resolves its symlinks, as far as it can.
func resolve(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}

// copyOut copies the loop-root file rel into out/. A file that vanished or
// stopped being a regular file since the walk is skipped; so is one swapped
// between the look and the open (os.Root already refuses any path that
// would leave the loop root).
func (w *writer) copyOut(src *os.Root, rel string) {
	if w.err != nil {
		return
	}
	name := filepath.FromSlash(rel)
	before, err := src.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		w.err = err
		return
	case !before.Mode().IsRegular():
		return
	}
	f, err := src.Open(name)
	if err != nil {
		w.err = err
		return
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		w.err = err
		return
	}
	if !os.SameFile(before, after) || !after.Mode().IsRegular() {
		return
	}
	w.create(outDir+"/"+rel, f, 0o644)
}
