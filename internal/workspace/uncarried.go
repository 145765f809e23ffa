package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
)

// Uncarried is what a snapshot leaves out of the loop root although it is
// on disk, by path and lstat: what the ignore rules exclude and all below
// it, every nested .git and all in it, and a top-level alias of .loop
// ([IsLoop]). Not the root's own .git and .loop, nor sockets, fifos and
// devices elsewhere (no content a check could use). [Uncarried.Changed]
// tells what appeared or changed meanwhile, reading no file.
type Uncarried map[string]uncarried

// uncarried is one entry of an [Uncarried] listing.
type uncarried struct {
	key    StatKey
	sealed bool // a directory that could not be listed: its full stat counts
}

// ScanUncarried lists what a snapshot of the loop root leaves out. It
// never follows a link, never opens a FIFO, and reads only ignore files.
// An excluded directory that cannot be listed is recorded as sealed; an
// included one is an error, as for a snapshot, and so is a directory
// beyond MaxDepth or MaxPathBytes. It stops when ctx is done.
func ScanUncarried(ctx context.Context, root string) (Uncarried, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open loop root %q: %w", root, err)
	}
	defer r.Close()
	rules, err := readInfoExclude(r)
	if err != nil {
		return nil, err
	}
	s := &uncarriedScan{ctx: ctx, u: Uncarried{}}
	if err := s.included(openListing(r), nil, rules); err != nil {
		return nil, err
	}
	return s.u, nil
}

// uncarriedScan is one ScanUncarried.
type uncarriedScan struct {
	ctx context.Context
	u   Uncarried
}

// included scans directory l, at path, which the rules may include: what
// they exclude is recorded, what they include entered.
func (s *uncarriedScan) included(l *dirList, path []string, rules []rule) error {
	skip := func(name string) bool { return len(path) == 0 && (name == ".git" || name == ".loop") }
	return eachEntry(l, path, rules, skip, nil, func(child []string, st fileStat, rules []rule) error {
		if err := live(s.ctx); err != nil {
			return err
		}
		return s.child(l, child, st, rules)
	})
}

// child records or enters the child path of l, whose lstat found st.
func (s *uncarriedScan) child(l *dirList, path []string, st fileStat, rules []rule) error {
	name := path[len(path)-1]
	// A top-level .LOOP (or ".loop."): a snapshot leaves it out as if it
	// were .loop, which it is on a case-folding disk; where it is not,
	// nothing carries it, and it is recorded like an ignored entry.
	aliased := len(path) == 1 && IsLoop(name)
	if name == ".git" || aliased || ignored(rules, path, st.key.mode.IsDir()) {
		return s.all(l, path, st)
	}
	if !st.key.mode.IsDir() {
		return nil
	}
	if err := checkDepth(path); err != nil {
		return err
	}
	sub, err := l.subSame(name, st)
	if err != nil {
		return fmt.Errorf("scan %q: %w", strings.Join(path, "/"), err)
	}
	defer sub.close()
	return s.included(sub, path, rules)
}

// all records the child path of l (lstat: st) and everything below it:
// git never re-includes what lies in an excluded directory.
func (s *uncarriedScan) all(l *dirList, path []string, st fileStat) error {
	rel := strings.Join(path, "/")
	s.u[rel] = uncarried{key: st.key}
	if !st.key.mode.IsDir() {
		return nil
	}
	if err := checkDepth(path); err != nil {
		return err
	}
	sub, err := l.subSame(path[len(path)-1], st)
	if err == nil {
		var entries []dirEntry
		entries, err = sub.entries()
		child := append(path, "")
		for _, e := range entries {
			if err == nil {
				err = live(s.ctx)
			}
			if err != nil {
				break
			}
			child[len(path)] = e.name
			err = s.all(sub, child, e.st)
		}
		sub.close()
	}
	if errors.Is(err, fs.ErrPermission) {
		s.u[rel] = uncarried{key: st.key, sealed: true}
		return nil
	}
	return placed(rel, err)
}

// UncarriedChange is a path of an [Uncarried] listing that differs from an
// earlier one, and how.
type UncarriedChange struct {
	Path string
	What string // "created", "modified", "mode changed" or "replaced by ..."
}

// Changed lists, in path order and not below a listed directory, what is
// in now and was not in u (created) or was in another form: modified (a
// non-directory's or a sealed directory's stat), mode changed (a
// directory's) or replaced by another kind. What is gone is no change:
// nothing is to be removed for it.
func (u Uncarried) Changed(now Uncarried) []UncarriedChange {
	paths := slices.Sorted(maps.Keys(now))
	var out []UncarriedChange
	listed := map[string]bool{}
	for _, p := range paths {
		if below(p, listed) {
			continue
		}
		what := differs(u[p], now[p], p, u)
		if what == "" {
			continue
		}
		out = append(out, UncarriedChange{Path: p, What: what})
		listed[p] = true
	}
	return out
}

// below reports whether an ancestor of p is in dirs.
func below(p string, dirs map[string]bool) bool {
	for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		if dirs[p[:i]] {
			return true
		}
	}
	return false
}

// differs says how is differs from was, the entry at p in before, or "".
func differs(was, is uncarried, p string, before Uncarried) string {
	if _, had := before[p]; !had {
		return "created"
	}
	wm, im := was.key.mode, is.key.mode
	switch {
	case wm.Type() != im.Type():
		return "replaced by " + kindOf(im)
	case wm.IsDir() && (was.sealed || is.sealed) && was.key != is.key:
		return "modified"
	case wm.IsDir() && wm != im:
		return "mode changed"
	case !wm.IsDir() && was.key != is.key:
		return "modified"
	}
	return ""
}
