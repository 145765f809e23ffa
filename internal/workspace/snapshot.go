package workspace

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

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
	now  func() time.Time // replaced in tests

	mu    sync.Mutex
	cache map[string]cacheEntry // never modified once published

	reads atomic.Int64 // files read so far, for tests
}

// NewHasher returns a Hasher for the directory root. Nothing is read until
// the first call to Snapshot or Files.
func NewHasher(root string) *Hasher {
	return &Hasher{root: root, now: time.Now}
}

// Snapshot returns the git tree id of the loop root's current content.
func (h *Hasher) Snapshot() (Snapshot, error) {
	id, err := h.walk(nil)
	if err != nil {
		return "", fmt.Errorf("snapshot %q: %w", h.root, err)
	}
	return Snapshot(id.String()), nil
}

// walk computes the top tree of the loop root (storing its objects, when
// store is not nil) with the cache of the previous walk, and keeps the
// cache of this one.
func (h *Hasher) walk(store *objectStore) (ObjectID, error) {
	h.mu.Lock()
	w := &walker{mode: hashing, prev: h.cache, next: make(map[string]cacheEntry, len(h.cache)), reads: &h.reads}
	h.mu.Unlock()
	w.start = h.now()
	r, err := OpenRoot(h.root)
	if err != nil {
		return ObjectID{}, err
	}
	defer r.Close()
	if store != nil {
		w.mode, w.store, store.root, store.reads = storing, store, r, &h.reads
	}
	es, err := w.walk(r)
	if err != nil {
		return ObjectID{}, err
	}
	id := treeID(es)
	if store != nil {
		if id, err = store.tree(es); err != nil {
			return ObjectID{}, err
		}
	}
	h.mu.Lock()
	h.cache = w.next
	h.mu.Unlock()
	return id, nil
}

// Files returns the sorted slash-separated relative paths of the files and
// symbolic links included in the snapshot (same exclusions), as
// `git ls-files` would list them after `git add -A`.
func (h *Hasher) Files() ([]string, error) {
	w := &walker{mode: listing, files: []string{}}
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
