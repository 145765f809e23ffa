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

// Hasher computes snapshots of one loop root, caching blob ids by path
// and [StatKey] so that later snapshots re-read only changed (or racily
// clean) files. A Hasher is safe for concurrent use.
type Hasher struct {
	root string
	k    Checkout
	now  func() time.Time // replaced in tests

	cache statCache[cacheEntry]

	reads atomic.Int64 // files read so far, for tests
}

// NewHasher returns a Hasher for root with git's default settings and the
// root's HEAD commit as base (see [Checkout]). It reads nothing yet.
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

// Snapshot returns the tree id of the loop root's content. A file over the
// Checkout's MaxFileSize fails it (ErrFileTooLarge), as does a path beyond
// MaxDepth or MaxPathBytes (ErrTooDeep). It stops when ctx is done, with
// an error wrapping its cause: a walk completes or gives no snapshot.
func (h *Hasher) Snapshot(ctx context.Context) (Snapshot, error) {
	id, _, err := h.walk(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("snapshot %q: %w", h.root, err)
	}
	return Snapshot(id.String()), nil
}

// UnreproducibleError is the error of [Hasher.Certify] for a root holding
// files no checkout of its snapshot reproduces: what was measured is not
// what the snapshot holds.
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

// Certify is Snapshot for a snapshot the gate may certify: when a file is
// not what a checkout of the snapshot writes, the error is an
// *UnreproducibleError holding the snapshot and the files.
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

// walk computes the top tree (storing its objects in s, if not nil) with
// the previous walk's cache; only a completed walk replaces it.
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

// Files returns the sorted paths of the files and links a snapshot
// includes, as `git ls-files` lists them after `git add -A`. It reads only
// ignore files, so a file of any size is listed; its other limits are
// Snapshot's.
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
