package workspace

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/phrase"
)

// Snapshot is a git tree id (40 hex chars) naming the content of a loop root.
type Snapshot string

// Short returns the first 7 characters of s, or all of s if it is shorter.
func (s Snapshot) Short() string { return phrase.Short(string(s)) }

// Hasher computes snapshots of one loop root.
//
// It caches blob ids by path and [StatKey] so that repeated snapshots of a
// mostly unchanged tree only re-read changed files; files modified shortly
// before a snapshot started are re-read on the next one too (see
// [Stamp.Vouches]). The cache holds the files seen by the latest completed
// snapshot. A Hasher is safe for concurrent use.
type Hasher struct {
	root string
	k    Checkout
	now  func() time.Time // replaced in tests

	cache statCache[cacheEntry]

	reads atomic.Int64 // files read so far, for tests
}

// NewHasher returns a Hasher for the directory root, converting files as
// a checkout with git's default settings does, from the root's HEAD
// commit (see [Checkout]). Nothing is read until the first call to
// Snapshot or Files.
func NewHasher(root string) *Hasher {
	return NewHasherWith(root, Checkout{})
}

// NewHasherWith is NewHasher with the settings and base of k.
func NewHasherWith(root string, k Checkout) *Hasher {
	if k.Base == nil {
		k.Base = CommitBase(root, "HEAD")
	}
	return &Hasher{root: root, k: k, now: time.Now}
}

// Snapshot returns the git tree id of the loop root's current content:
// what `git add -A && git write-tree` records in a checkout of the base.
// A regular file larger than the Checkout's MaxFileSize fails it (the
// error wraps ErrFileTooLarge and names the file), as does a directory or
// path beyond MaxDepth or MaxPathBytes (ErrTooDeep). It stops when ctx is
// done, between files and within a file's read, with an error wrapping
// ctx's cause: a walk either completes or returns no snapshot.
func (h *Hasher) Snapshot(ctx context.Context) (Snapshot, error) {
	id, _, err := h.walk(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("snapshot %q: %w", h.root, err)
	}
	return Snapshot(id.String()), nil
}

// UnreproducibleError is the error of [Hasher.Certify] for a loop root
// holding files that no checkout of its snapshot reproduces (see
// [Problem]): the snapshot is taken, but what was measured in the root is
// not what it holds.
type UnreproducibleError struct {
	Snapshot Snapshot
	Problems []Problem // by path
}

// maxProblems is how many problems an UnreproducibleError names.
const maxProblems = 5

func (e *UnreproducibleError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems[:min(len(e.Problems), maxProblems)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if n := len(e.Problems) - maxProblems; n > 0 {
		fmt.Fprintf(&b, "; and %d more files", n)
	}
	b.WriteString(": the checks measured bytes no checkout reproduces")
	return b.String()
}

// Certify is Snapshot for a snapshot the gate may certify: when a file
// of the root is not what a checkout of the snapshot writes (its
// attributes convert it, and the conversion does not give its bytes
// back), the error is an *UnreproducibleError holding the snapshot and
// the files. Its other errors are Snapshot's.
func (h *Hasher) Certify(ctx context.Context) (Snapshot, error) {
	id, problems, err := h.walk(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("snapshot %q: %w", h.root, err)
	}
	snap := Snapshot(id.String())
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
		return snap, &UnreproducibleError{Snapshot: snap, Problems: problems}
	}
	return snap, nil
}

// walk computes the top tree of the loop root (storing its objects, when
// store is not nil) with the cache of the previous walk, and keeps the
// cache of this one: only a walk that completed replaces it.
func (h *Hasher) walk(ctx context.Context, s storer.EncodedObjectStorer) (ObjectID, []Problem, error) {
	w := &walker{ctx: ctx, mode: hashing, cache: h.cache.begin(h.now()), reads: &h.reads, k: h.k, base: h.k.Base, s: s}
	if s != nil {
		w.mode = storing
	}
	r, err := OpenRoot(h.root)
	if err != nil {
		return ObjectID{}, nil, err
	}
	defer r.Close()
	es, err := w.walk(r)
	if err != nil {
		return ObjectID{}, nil, err
	}
	id := treeID(es)
	if s != nil {
		if id, err = w.tree(es); err != nil {
			return ObjectID{}, nil, err
		}
	}
	h.cache.end(w.cache)
	return id, w.problems, nil
}

// Files returns the sorted slash-separated relative paths of the files and
// symbolic links included in the snapshot (same exclusions), as
// `git ls-files` would list them after `git add -A`. It reads no file
// but the ignore files, so a file of any size is listed; its other limits
// are Snapshot's, and so is ctx.
func (h *Hasher) Files(ctx context.Context) ([]string, error) {
	w := &walker{ctx: ctx, mode: listing, files: []string{}}
	r, err := OpenRoot(h.root)
	if err == nil {
		_, err = w.walk(r)
		r.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("list files of %q: %w", h.root, err)
	}
	sort.Strings(w.files)
	return w.files, nil
}
