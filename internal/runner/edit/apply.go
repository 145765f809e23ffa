package edit

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Refused is the error of a block whose path no edit may touch.
type Refused struct {
	Path string
	Why  string
}

func (e *Refused) Error() string { return fmt.Sprintf("edit of %q refused: %s", e.Path, e.Why) }

// Mismatch is the error of a block whose SEARCH text is not in the file
// exactly once.
type Mismatch struct {
	Path  string
	Block int // 1-based, in reply order
	Why   string
}

func (e *Mismatch) Error() string {
	return fmt.Sprintf("edit of %q failed: block %d: %s", e.Path, e.Block, e.Why)
}

// Options say what else an edit may not touch.
type Options struct {
	// Refuse says why a path (slash-separated, relative to the root) may
	// not be written, or ""; nil refuses nothing more.
	Refuse func(rel string) string
}

// file is a file as the edits so far left it.
type file struct {
	data    string
	perm    fs.FileMode
	existed bool
	orig    workspace.Entry
}

// Apply checks every block against the files below w's root as they are
// now and, when all hold, writes the files they change. It returns the
// paths written, sorted in reply order. When any block is refused or does
// not match, it writes nothing and returns every problem found (errors of
// type *Refused and *Mismatch, joined).
func Apply(w *workspace.Writer, blocks []Block, opts Options) ([]string, error) {
	files := map[string]*file{}
	var order []string
	var errs []error
	for i, b := range blocks {
		f, err := load(w, b.Path, files, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if f.data, err = change(f, b, i+1); err != nil {
			errs = append(errs, err)
			continue
		}
		if !slices.Contains(order, b.Path) {
			order = append(order, b.Path)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return order, write(w, order, files)
}

// load returns the file a block edits, reading it the first time.
func load(w *workspace.Writer, rel string, files map[string]*file, opts Options) (*file, error) {
	if f, ok := files[rel]; ok {
		return f, nil
	}
	if why := pathProblem(rel); why != "" {
		return nil, &Refused{Path: rel, Why: why}
	}
	if opts.Refuse != nil {
		if why := opts.Refuse(rel); why != "" {
			return nil, &Refused{Path: rel, Why: why}
		}
	}
	if why, err := parents(w, rel); why != "" || err != nil {
		return nil, errors.Join(refusedIf(rel, why), err)
	}
	e, ok, err := w.Lookup(rel)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		f := &file{perm: 0o644}
		files[rel] = f
		return f, nil
	case !e.Mode.IsRegular():
		return nil, &Refused{Path: rel, Why: "it is " + e.Kind() + ", not a regular file"}
	case e.Err != "" || e.Data == nil:
		return nil, &Refused{Path: rel, Why: "it cannot be read whole: " + e.Err}
	}
	f := &file{data: string(e.Data), perm: e.Mode.Perm(), existed: true, orig: e}
	files[rel] = f
	return f, nil
}

func refusedIf(rel, why string) error {
	if why == "" {
		return nil
	}
	return &Refused{Path: rel, Why: why}
}

// pathProblem says why a path may never be edited, or "": it must be
// relative, clean and slash-separated, and outside .git and .loop.
func pathProblem(rel string) string {
	switch {
	case rel == "":
		return "the path is empty"
	case strings.HasPrefix(rel, "/") || strings.Contains(rel, `\`) || strings.Contains(rel, ":"):
		return "the path is not relative to the loop root"
	case strings.ContainsRune(rel, 0) || strings.ContainsAny(rel, "\n\r"):
		return "the path has a control character"
	}
	for _, part := range strings.Split(rel, "/") {
		switch {
		case part == "..":
			return "the path leads outside the loop root"
		case part == "" || part == "." || path.Clean(rel) != rel:
			return "the path is not clean (empty, . or .. components)"
		case strings.EqualFold(part, ".git"):
			return "the path is inside a .git directory"
		}
	}
	if first, _, _ := strings.Cut(rel, "/"); strings.EqualFold(first, ".loop") {
		return "the path is inside .loop, the runner's own directory"
	}
	return ""
}

// parents says why a path's parents may not be written through: one is a
// symbolic link or not a directory. Missing parents are fine.
func parents(w *workspace.Writer, rel string) (string, error) {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		e, ok, err := w.Lookup(dir)
		switch {
		case err != nil:
			return "", err
		case !ok:
			return "", nil
		case e.Mode&fs.ModeSymlink != 0:
			return fmt.Sprintf("its parent %q is a symbolic link", dir), nil
		case !e.Mode.IsDir():
			return fmt.Sprintf("its parent %q is %s, not a directory", dir, e.Kind()), nil
		}
	}
	return "", nil
}

// change applies block b (number n) to f's text.
func change(f *file, b Block, n int) (string, error) {
	if b.Search == "" {
		if f.data != "" {
			return "", &Mismatch{Path: b.Path, Block: n, Why: "an empty SEARCH creates a file, and this one already exists and is not empty"}
		}
		return b.Replace, nil
	}
	switch count := strings.Count(f.data, b.Search); {
	case !f.existed && f.data == "":
		return "", &Mismatch{Path: b.Path, Block: n, Why: "the file does not exist (an empty SEARCH creates one)"}
	case count == 0:
		return "", &Mismatch{Path: b.Path, Block: n, Why: "its SEARCH text does not match the file exactly"}
	case count > 1:
		return "", &Mismatch{Path: b.Path, Block: n, Why: fmt.Sprintf("its SEARCH text matches %d places; it must match exactly one", count)}
	}
	return strings.Replace(f.data, b.Search, b.Replace, 1), nil
}

// write writes the changed files. If one cannot be written, those already
// written are put back as they were.
func write(w *workspace.Writer, order []string, files map[string]*file) error {
	for i, rel := range order {
		f := files[rel]
		if err := w.WriteFile(rel, []byte(f.data), f.perm); err != nil {
			return errors.Join(fmt.Errorf("write %q: %w", rel, err), undo(w, order[:i], files))
		}
	}
	return nil
}

// undo puts back the files in order as they were before Apply.
func undo(w *workspace.Writer, order []string, files map[string]*file) error {
	var errs []error
	for _, rel := range order {
		f := files[rel]
		var err error
		if f.existed {
			_, err = w.Put(rel, f.orig)
		} else {
			err = w.Remove(rel)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("put back %q: %w", rel, err))
		}
	}
	return errors.Join(errs...)
}
