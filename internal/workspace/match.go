package workspace

import (
	"os"
	"strings"
)

// Matcher tells which paths of a tree a snapshot includes: never .git nor
// the top .loop, and not what the tree's .gitignore files (read as
// needed, never through a link or a named pipe) or a .git/info/exclude
// ignore. Paths need not exist. It caches what it reads: make a new one
// when ignore files may have changed.
type Matcher struct {
	r       *os.Root
	exclude []rule
	dirs    map[string]dirRules // by directory, "" for the top
}

// dirRules is what applies to the children of one directory.
type dirRules struct {
	rules   []rule // in increasing order of precedence
	ignored bool   // the directory, or one above it, is excluded
	real    bool   // a real directory: its ignore file may be read
}

// NewMatcher returns a Matcher for the tree r.
func NewMatcher(r *os.Root) (*Matcher, error) {
	exclude, err := readInfoExclude(r)
	if err != nil {
		return nil, err
	}
	return &Matcher{r: r, exclude: exclude, dirs: map[string]dirRules{}}, nil
}

// Over returns a Matcher for the tree r (a copy of the loop root) with
// m's .git/info/exclude.
func (m *Matcher) Over(r *os.Root) *Matcher {
	return &Matcher{r: r, exclude: m.exclude, dirs: map[string]dirRules{}}
}

// Included reports whether a snapshot would include a file or link at
// rel.
func (m *Matcher) Included(rel string) (bool, error) {
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		if c == ".git" || (i == 0 && IsLoop(c)) {
			return false, nil
		}
	}
	d, err := m.dir(parts[:len(parts)-1])
	if err != nil || d.ignored {
		return false, err
	}
	return !ignored(d.rules, parts, false), nil
}

// dir returns what applies to the children of the directory at parts.
func (m *Matcher) dir(parts []string) (dirRules, error) {
	key := strings.Join(parts, "/")
	if d, ok := m.dirs[key]; ok {
		return d, nil
	}
	d := dirRules{rules: m.exclude, real: true}
	if len(parts) > 0 {
		up, err := m.dir(parts[:len(parts)-1])
		if err != nil {
			return dirRules{}, err
		}
		d.rules, d.real = up.rules, false
		d.ignored = up.ignored || ignored(up.rules, parts, true)
		if up.real { // a real directory of the tree?
			fi, err := m.r.Lstat(key)
			if err != nil && !missing(err) {
				return dirRules{}, err
			}
			d.real = err == nil && fi.IsDir()
		}
	}
	if d.real && !d.ignored {
		var err error
		if d.rules, err = readRules(m.r, join(key, ".gitignore"), parts, d.rules); err != nil {
			return dirRules{}, err
		}
	}
	m.dirs[key] = d
	return d, nil
}

// join joins a directory ("" for the top) and a name.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
