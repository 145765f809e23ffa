package state

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// The local state repository would grow by every checkpoint's objects
// (the saves' trees and blobs, written loose, and a pack per fetch) for as long as the loop runs. It is
// kept bounded: once it holds cacheLimits.loose objects added since the
// last collection (loose ones, and those the saves added in packs) or
// cacheLimits.packs packs, the objects
// of the branch head are written to one pack and every other object and
// pack is deleted, so that what remains is the head and what came since.
// Nothing is lost: the branch on the remote holds everything, and a
// later process that needs an older commit fetches.
//
// Deleting objects under another process's reads would break them, so
// every Branch holds a shared lock on the cache while it is open, and the
// collection runs only when it can take that lock exclusively (nobody
// else has the cache open); otherwise it is tried again later.

// cacheLimits are the sizes past which the cache is collected.
type cacheLimits struct{ loose, packs int }

var defaultCacheLimits = cacheLimits{loose: 4096, packs: 32}

// cacheLockFile is the cache's shared lock, in its locks directory.
const cacheLockFile = "cache.lock"

// gcStorer is what collecting needs of the store (the filesystem storage).
type gcStorer interface {
	storer.LooseObjectStorer
	storer.PackedObjectStorer
	storer.PackfileWriter
	Reindex()
}

// maybeGC collects the cache when it has grown past the limits since the
// last collection. Callers hold b.mu. A failure leaves the cache usable:
// objects are deleted only once the new pack is whole.
func (b *Branch) maybeGC() error {
	loose, packs, err := b.cacheSize()
	if err != nil || (loose < b.gcAt.loose && packs < b.gcAt.packs) {
		return err
	}
	b.gcAt = cacheLimits{loose + b.limits.loose, packs + b.limits.packs}
	if b.head.IsZero() {
		return nil
	}
	if !b.cacheLock.tryExclusive() {
		// Someone else has the cache open: next time. Between losing the
		// shared lock and taking it again, that process may collect the
		// cache: read its packs afresh, and view refetches when this
		// Branch's head went with the collection.
		err := b.cacheLock.shared()
		b.reindex()
		return err
	}
	defer b.cacheLock.shared()
	kept, err := b.gc()
	if err != nil {
		return fmt.Errorf("collect the local state repository %q: %w", b.opts.Cache, err)
	}
	// The next collection waits for as many new objects as this one kept
	// (at least the limit), so that collecting a large head costs each
	// save a constant share, however long the run.
	b.gcAt = cacheLimits{max(b.limits.loose, kept), b.limits.packs + 1}
	b.looseBase, b.objs.written = 0, 0
	return nil
}

// cacheSize returns how many objects were added to the cache since the
// last collection, and how many packs it holds. The loose objects are
// counted once per Branch (or after a collection); then those this Branch
// stored are added (the workspace's changed files are counted at the next
// count).
func (b *Branch) cacheSize() (loose, packs int, err error) {
	var s gcStorer = b.store
	ps, err := s.ObjectPacks()
	if err != nil {
		return 0, 0, err
	}
	if b.looseBase < 0 {
		n := 0
		if err := s.ForEachObjectHash(func(plumbing.Hash) error { n++; return nil }); err != nil {
			return 0, 0, err
		}
		b.looseBase, b.objs.written = n, 0
	}
	return b.looseBase + b.objs.written, len(ps), nil
}

// gc writes the objects of the head to one pack, then deletes every loose
// object and every other pack, and returns how many objects it kept.
// Callers hold the cache exclusively.
func (b *Branch) gc() (int, error) {
	keep, err := b.reachable(b.head)
	if err != nil {
		return 0, err
	}
	return len(keep), b.repack(keep)
}

// repack writes keep to one pack and deletes every other object.
func (b *Branch) repack(keep []plumbing.Hash) error {
	var s gcStorer = b.store
	old, err := s.ObjectPacks()
	if err != nil {
		return err
	}
	var loose []plumbing.Hash
	if err := s.ForEachObjectHash(func(h plumbing.Hash) error { loose = append(loose, h); return nil }); err != nil {
		return err
	}
	w, err := s.PackfileWriter()
	if err != nil {
		return err
	}
	_, err = packfile.NewEncoder(w, b.store, false).Encode(keep, 10)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	now, err := s.ObjectPacks()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(now, func(p plumbing.Hash) bool { return !slices.Contains(old, p) }) {
		old = nil // the pack written is one the cache had: keep them all
	}
	for _, h := range loose {
		if err := s.DeleteLooseObject(h); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, p := range old {
		if err := s.DeleteOldObjectPackAndIndex(p, time.Time{}); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	b.reindex()
	b.haves = []plumbing.Hash{b.head}
	return nil
}

// reindex forgets what the store knew of its packs and the decoded trees,
// after a collection.
func (b *Branch) reindex() {
	b.store.Reindex()
	clear(b.objs.trees)
}

// reachable returns commit h and every object of its tree (never a
// submodule's commit, which belongs to another repository).
func (b *Branch) reachable(h plumbing.Hash) ([]plumbing.Hash, error) {
	c, err := object.GetCommit(b.store, h)
	if err != nil {
		return nil, err
	}
	out := []plumbing.Hash{h}
	seen := map[plumbing.Hash]bool{}
	var walk func(t plumbing.Hash) error
	walk = func(t plumbing.Hash) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		out = append(out, t)
		es, err := b.objs.tree(t)
		if err != nil {
			return err
		}
		for _, e := range es {
			switch {
			case e.Mode == filemode.Submodule, seen[e.Hash]:
			case e.Mode == filemode.Dir:
				err = walk(e.Hash)
			default:
				seen[e.Hash] = true
				out = append(out, e.Hash)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(c.TreeHash)
}
