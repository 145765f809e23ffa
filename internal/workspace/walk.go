package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/storer"
)

// walkMode says what a walk of the loop root computes.
type walkMode int

const (
	listing walkMode = iota // the included paths ([Hasher.Files])
	hashing                 // object ids ([Hasher.Snapshot])
	storing                 // object ids, storing the files read ([Hasher.WriteObjects])
)

// walker performs one traversal of the loop root.
type walker struct {
	ctx   context.Context // the walk stops when it is done
	mode  walkMode
	cache *statPass[cacheEntry] // the blob ids of the previous walk, and of this one
	files []string              // included paths, when listing
	rel   []byte                // the path of the file at hand, reused
	reads *atomic.Int64
	s     storer.EncodedObjectStorer // where files read go, when storing
	root  *os.Root                   // the loop root

	k        Checkout  // how files convert (convert.go)
	base     Base      // the tree the root was checked out from
	in, out  attrStack // the attributes files above the directory at hand, as `git add` and a checkout read them
	problems []Problem // the files no checkout of the snapshot reproduces
	abuf     attrList  // reused by convs
}

// walk returns the entries of the loop root r, in git's order; when
// storing, with their subtrees.
func (w *walker) walk(r *os.Root) ([]entry, error) {
	w.root = r
	rules, err := readInfoExclude(r)
	if err != nil {
		return nil, err
	}
	return w.dir(openListing(r), nil, rules)
}

// converting reports whether attributes or settings may convert files.
func (w *walker) converting() bool {
	return w.mode != listing && (len(w.in) > 0 || len(w.out) > 0 || w.k.autocrlf() != "false")
}

// readInfoExclude returns the rules of .git/info/exclude, if .git is a directory.
func readInfoExclude(r *os.Root) ([]rule, error) {
	fi, err := r.Lstat(".git")
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return readRules(r, ".git/info/exclude", nil, nil)
}

// dir returns the sorted tree entries of directory l, at path (extended
// in place: see eachEntry), never .git nor, at the top, .loop.
func (w *walker) dir(l *dirList, path []string, rules []rule) ([]entry, error) {
	in, out := w.in, w.out
	defer func() { w.in, w.out = in, out }()
	var es []entry
	skip := func(name string) bool { return name == ".git" || (len(path) == 0 && IsLoop(name)) }
	err := eachEntry(l, path, rules, skip, w.attributes, func(child []string, st fileStat, rules []rule) error {
		e, ok, err := w.entry(l, child, st, rules)
		if ok && w.mode != listing { // a listing records paths, not entries
			if es == nil {
				es = make([]entry, 0, l.count)
			}
			es = append(es, e)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sortEntries(es)
	return es, nil
}

// eachEntry reads directory l's .gitignore on top of rules and calls visit
// for each child whose name skip does not refuse, with path extended by
// its name. visit must not keep child: it is path extended in place, so
// that a walk's directories share one array of names (a copy each would
// cost the square of the depth); whoever keeps a path copies it. found,
// if not nil, gets the listing and rules first.
func eachEntry(l *dirList, path []string, rules []rule, skip func(name string) bool, found func(l *dirList, path []string, entries []dirEntry, rules []rule) error, visit func(child []string, st fileStat, rules []rule) error) error {
	entries, err := l.entries()
	if err != nil {
		return err
	}
	if slices.ContainsFunc(entries, func(e dirEntry) bool { return e.name == ".gitignore" && e.typ == 0 }) { // a regular file, as readRules reads
		if rules, err = readRules(l.r, ".gitignore", path, rules); err != nil {
			return err
		}
	}
	if found != nil {
		if err := found(l, path, entries, rules); err != nil {
			return err
		}
	}
	child := append(path, "")
	for _, e := range entries {
		if skip(e.name) {
			continue
		}
		child[len(path)] = e.name
		if err := visit(child, e.st, rules); err != nil {
			return err
		}
	}
	return nil
}

// entry returns the tree entry, if any, of the child path of l, whose
// lstat found s.
func (w *walker) entry(l *dirList, path []string, s fileStat, rules []rule) (entry, bool, error) {
	if err := live(w.ctx); err != nil {
		return entry{}, false, err
	}
	mode := s.key.mode
	if !mode.IsDir() && !mode.IsRegular() && mode&fs.ModeSymlink == 0 {
		return entry{}, false, nil // socket, fifo, device...
	}
	if ignored(rules, path, mode.IsDir()) {
		return entry{}, false, nil
	}
	if mode.IsDir() {
		return w.subdir(l, path, s, rules)
	}
	e := entry{name: path[len(path)-1], mode: modeFile}
	switch {
	case mode&fs.ModeSymlink != 0:
		e.mode = modeSymlink
	case mode&0o100 != 0:
		e.mode = modeExec
	}
	w.rel = appendPath(w.rel[:0], path)
	if len(w.rel) > MaxPathBytes {
		return entry{}, false, tooDeep(path, len(w.rel))
	}
	if w.mode == listing {
		w.files = append(w.files, string(w.rel))
		return e, true, nil
	}
	if e.mode == modeSymlink {
		return w.symlink(l, e)
	}
	return w.file(l, e, s)
}

// subdir returns the tree entry of a directory, none if it records
// nothing.
func (w *walker) subdir(l *dirList, path []string, s fileStat, rules []rule) (entry, bool, error) {
	name := path[len(path)-1]
	if err := checkDepth(path); err != nil {
		return entry{}, false, err
	}
	sub, err := l.subSame(name, s)
	if err != nil {
		return entry{}, false, err
	}
	defer sub.close()
	es, err := w.dir(sub, path, rules)
	if err != nil || len(es) == 0 {
		return entry{}, false, err
	}
	e := entry{name: name, mode: modeTree}
	if w.mode != listing {
		e.id = treeID(es)
	}
	if w.mode == storing {
		e.obj = &toStore{sub: es}
	}
	return e, true, nil
}

// symlink completes the entry e of a link, whose blob is its target.
func (w *walker) symlink(l *dirList, e entry) (entry, bool, error) {
	target, err := l.r.Readlink(e.name)
	if err != nil {
		return entry{}, false, err
	}
	e.id = LinkID(target)
	if w.mode == storing {
		e.obj = &toStore{link: target, unverified: true}
	}
	return e, true, nil
}

// file completes the entry e of a regular file of l (lstat: s): its blob
// id from the cache when the stat allows (unverified: the store may lack
// it), else read (and stored, when storing).
func (w *walker) file(l *dirList, e entry, s fileStat) (entry, bool, error) {
	if err := CheckFileSize(string(w.rel), s.key.size, w.k.maxFileSize()); err != nil {
		return entry{}, false, err // by its lstat: not a byte is read
	}
	var cv *convs // nil: nothing converts the file, the common case, which costs nothing
	if w.converting() {
		if c := w.convs(string(w.rel)); c.converts() {
			cv = &c
		}
	}
	if c, ok := w.cache.vouched(string(w.rel), s.key); ok && c.same(cv) {
		w.cache.keep(c.rel, s.key, c) // the path string the entry keeps: none is made
		e.id = c.id
		if why := c.why(); why != "" {
			w.problems = append(w.problems, Problem{Path: c.rel, Why: why})
		}
		if w.mode == storing {
			e.obj = &toStore{unverified: true, rel: c.rel, conv: c.conv}
		}
		return e, true, nil
	}
	id, err := w.read(l.r, e.name, string(w.rel), s, cv)
	if err != nil {
		return entry{}, false, err
	}
	e.id = id
	return e, true, nil
}

// read reads the file name of r (at rel, lstat: s) and caches its id.
func (w *walker) read(r *os.Root, name, rel string, s fileStat, cv *convs) (ObjectID, error) {
	w.reads.Add(1)
	var id ObjectID
	var now fs.FileInfo
	var why string
	var err error
	if w.mode == storing || cv != nil {
		id, now, why, err = w.readBlob(r, name, s.fi, rel, cv)
	} else {
		id, now, err = hashFile(w.ctx, r, name, s.fi, w.k.maxFileSize())
	}
	if errors.Is(err, errOverLimit) { // it grew since the lstat
		return ObjectID{}, tooLargeFile(rel, now.Size(), w.k.maxFileSize())
	}
	if err != nil {
		op := map[walkMode]string{hashing: "hash", storing: "store"}[w.mode]
		return ObjectID{}, fmt.Errorf("%s %q: %w", op, rel, err)
	}
	if why != "" {
		w.problems = append(w.problems, Problem{Path: rel, Why: why})
	}
	w.cache.keep(rel, KeyOf(now), cacheEntry{id: id, rel: rel, conv: convertedAs(cv, why)})
	return id, nil
}

// appendPath appends the components of path to b, slash-separated.
func appendPath(b []byte, path []string) []byte {
	for i, c := range path {
		if i > 0 {
			b = append(b, '/')
		}
		b = append(b, c...)
	}
	return b
}
