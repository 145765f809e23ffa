// Package guard owns putting back what agents change outside their
// reach: a set of files recorded before they run and put back after
// (Files), and a directory written to hold exactly what loop-action puts
// there (Layout), such as the repository of an isolated worktree or
// checkout; and which files of a git directory make git run commands
// (GitGuarded), which the runner and the hook both guard. It reads and
// writes through workspace, never through a symbolic link nor blocking
// on a named pipe; go-git offers neither, so the mechanism is ours.
package guard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Files are the files below Root that a scan keeps: workspace's
// [workspace.Writer.Scan] enters the directories Descend says and keeps
// the paths Keep says (both relative to Root, slash-separated).
type Files struct {
	Root          string
	Descend, Keep func(rel string) bool
}

// Scan records the files f keeps, as they are now.
func (f Files) Scan(ctx context.Context) (map[string]workspace.Entry, error) {
	w, err := workspace.OpenWriter(f.Root)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return w.Scan(ctx, "", f.Descend, f.Keep)
}

// Restore scans f again and puts back every path that changed since
// before (a scan of f), and returns what changed, put back or not.
func (f Files) Restore(ctx context.Context, before map[string]workspace.Entry) ([]Change, error) {
	now, err := f.Scan(ctx)
	if err != nil {
		return nil, err
	}
	changes := Diff(before, now)
	if len(changes) == 0 {
		return nil, nil
	}
	w, err := workspace.OpenWriter(f.Root)
	if err != nil {
		return changes, err
	}
	defer w.Close()
	var errs []error
	for _, c := range changes {
		if _, err := PutBack(w, c); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Path, err))
		}
	}
	return changes, errors.Join(errs...)
}

// Change is a path whose entry differs between two scans.
type Change struct {
	Path string // slash-separated, relative to the scanned root
	What string // created, deleted, modified, mode changed, or replaced by a …
	Was  workspace.Entry
	Had  bool // the path was there before
}

// Diff lists, in path order, every path that differs from before to now.
func Diff(before, now map[string]workspace.Entry) []Change {
	all := make(map[string]workspace.Entry, len(before)+len(now))
	maps.Copy(all, before)
	maps.Copy(all, now)
	var out []Change
	for _, p := range slices.Sorted(maps.Keys(all)) {
		was, had := before[p]
		is, has := now[p]
		if what := change(was, had, is, has); what != "" {
			out = append(out, Change{Path: p, What: what, Was: was, Had: had})
		}
	}
	return out
}

// change says how a path changed, or "" when it did not.
func change(was workspace.Entry, had bool, is workspace.Entry, has bool) string {
	switch {
	case had && !has:
		return "deleted"
	case !had && has:
		return "created"
	case was.Equal(is):
		return ""
	case was.Mode.Type() != is.Mode.Type():
		return "replaced by " + is.Kind()
	case was.Mode.IsRegular() && was.Size == is.Size && was.Sum == is.Sum:
		return "mode changed"
	}
	return "modified"
}

// PutBack makes c.Path what it was: removed when it was not there, else
// written through w, which never follows a link. The note says which
// parents had to be made directories again ("" when none).
func PutBack(w *workspace.Writer, c Change) (note string, err error) {
	if !c.Had {
		err := w.Remove(c.Path)
		if errors.Is(err, workspace.ErrParent) {
			// A parent was put back as a file or link just before: the
			// path is no longer one of the tree.
			if _, ok, lerr := w.Lookup(c.Path); lerr == nil && !ok {
				err = nil
			}
		}
		return "", err
	}
	replaced, err := w.Put(c.Path, c.Was)
	var notes []string
	for _, p := range replaced {
		what := "was " + workspace.Entry{Mode: p.Mode}.Kind()
		if p.Target != "" {
			what += " to " + p.Target
		}
		notes = append(notes, fmt.Sprintf("%s %s and is a directory again", p.Path, what))
	}
	if len(notes) == 0 {
		return "", err
	}
	return "; " + strings.Join(notes, "; "), err
}
