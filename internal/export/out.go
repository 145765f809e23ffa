package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/loop-action/loop-action/internal/workspace"
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
// [export] paths patterns (doublestar globs relative to root, cleaned by
// cleanPatterns; a pattern that matches a directory takes everything
// under it). It never follows a symlink, never enters .git/ or .loop/,
// and skips the export being written (dirName and its temporary siblings
// in parent, when parent is inside root).
func collect(root string, pats []string, parent *os.Root, dirName string) (*source, error) {
	if len(pats) == 0 {
		return &source{}, nil
	}
	r, err := workspace.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open the loop root: %w", err)
	}
	s := &source{root: r}
	self := selfSkipper(r, parent, dirName)
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
			return nil
		case d.Name() == ".git" || d.Name() == ".loop": // git's and loop-action's own state
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
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

// selfSkipper returns a test for the directories of the export itself in
// the walk of root: dirName and the temporary directories Write builds
// beside it, in the directory that is parent. Whether a directory of root
// is parent is asked of the file system (the same file), not of the two
// paths, however either is spelled. Without it, "**" would copy the
// previous export into the new one.
func selfSkipper(root, parent *os.Root, dirName string) func(string) bool {
	at, err := parent.Stat(".")
	return func(p string) bool {
		name := path.Base(p)
		if err != nil || name != dirName && !strings.HasPrefix(name, "."+dirName+tmpMarker) {
			return false
		}
		dir, err := root.Lstat(filepath.FromSlash(path.Dir(p)))
		return err == nil && os.SameFile(dir, at)
	}
}

// placement is a loop-root file and where it goes in the export.
type placement struct{ src, dest string }

// place decides where each loop-root file goes: out/<rel>, except that a
// file already under out/ keeps its place (out/ is not repeated). Files
// under out/ are placed first, so they keep their place; a later file whose place is
// taken (by a file at the same path, or a file where its directory would
// be, or the reverse) is withheld, never written over another.
func place(files []string) ([]placement, []Withheld) {
	under := func(rel string) bool { return strings.HasPrefix(rel, outDir+"/") }
	order := append(slices.DeleteFunc(slices.Clone(files), func(r string) bool { return !under(r) }),
		slices.DeleteFunc(slices.Clone(files), under)...)
	files2 := map[string]string{} // export path -> the loop-root file placed there
	dirs := map[string]string{}   // export directory -> a loop-root file placed under it
	var placed []placement
	var withheld []Withheld
	for _, rel := range order {
		dest := rel
		if !under(rel) {
			dest = outDir + "/" + rel
		}
		if why := clash(dest, files2, dirs); why != "" {
			withheld = append(withheld, Withheld{Path: dest, Source: rel, Reason: why})
			continue
		}
		files2[dest] = rel
		for d := path.Dir(dest); d != outDir; d = path.Dir(d) {
			dirs[d] = rel
		}
		placed = append(placed, placement{src: rel, dest: dest})
	}
	return placed, withheld
}

// clash says why dest cannot be written, given the files placed so far.
func clash(dest string, files, dirs map[string]string) string {
	if other, ok := files[dest]; ok {
		return fmt.Sprintf("the loop root's %q is exported to the same path", other)
	}
	if other, ok := dirs[dest]; ok {
		return fmt.Sprintf("the export needs %q as a directory, for the loop root's %q", dest, other)
	}
	for d := path.Dir(dest); d != outDir; d = path.Dir(d) {
		if other, ok := files[d]; ok {
			return fmt.Sprintf("the loop root's %q is exported to %q, where this file's directory would be", other, d)
		}
	}
	return ""
}

// copyOut copies a loop-root file into the export. A file that vanished
// or stopped being a regular file since the walk is skipped; so is one
// swapped between the look and the open (os.Root already refuses any path
// that would leave the loop root). A file whose name or content holds a
// secret is withheld, and so is one whose export path Windows reads as
// another (WindowsNames): a name that escapes or means something else
// there, or a path that differs only in case from one exported before.
func (w *writer) copyOut(src *os.Root, p placement) {
	if w.err != nil {
		return
	}
	if masked := w.mask(p.dest); masked != p.dest {
		w.withhold(Withheld{Path: masked, Source: w.mask(p.src), Reason: "its name holds the value of a provider variable, or an encoding of it"})
		return
	}
	if why := w.windows.Check(p.dest); why != "" {
		w.withhold(Withheld{Path: p.dest, Source: p.src, Reason: w.mask(why)})
		return
	}
	f, err := openRegular(src, filepath.FromSlash(p.src))
	if f == nil || err != nil {
		w.err = err
		return
	}
	defer f.Close()
	if !w.createScanned(p.dest, p.src, f) && w.err == nil {
		w.windows.Keep(p.dest)
	}
}

// openRegular opens name in root when it is, and stays, a regular file;
// it returns nil and no error when it is not one (any more).
func openRegular(root *os.Root, name string) (*os.File, error) {
	before, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !before.Mode().IsRegular():
		return nil, nil
	}
	f, after, err := workspace.OpenFile(root, name) // a FIFO swapped in since the lstat never blocks
	if errors.Is(err, workspace.ErrNotRegular) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !os.SameFile(before, after) {
		f.Close()
		return nil, nil
	}
	return f, nil
}
