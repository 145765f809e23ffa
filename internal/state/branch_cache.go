package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/loop-action/loop-action/internal/gitremote"
	"github.com/loop-action/loop-action/internal/workspace"
)

// cache is a Branch's local state repository: the objects, the hint of
// the head it last saw on the remote, and the collection that keeps it
// bounded (see maybeGC). Callers hold the Branch's mutex.
type cache struct {
	path  string              // for messages
	store *filesystem.Storage // the repository
	objs  *objects            // the Branch's, whose decoded trees a collection drops
	hint  string              // the hint file (see saw)
	haves []plumbing.Hash     // the commits it holds whole, newest first, offered to the remote

	lock      *sharedLock // held shared while open; exclusively to collect (see maybeGC)
	limits    cacheLimits
	gcAt      cacheLimits // the sizes at which maybeGC collects next
	looseBase int         // loose objects counted in the cache; -1 before the first count
}

// close releases the repository and the shared lock.
func (c *cache) close() error {
	return errors.Join(c.store.Close(), c.lock.release())
}

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

// maybeGC collects the cache once it has grown past the limits since the
// last collection: loose objects added (loose, or in the saves' packs) or
// packs. The head's objects are written to one pack and every other object
// and pack deleted; nothing is lost, the remote holds everything and a
// process that needs an older commit fetches. Deleting objects under
// another process's reads would break them, so every Branch holds a shared
// lock on the cache while open, and the collection runs only when it can
// take it exclusively. A failure leaves the cache usable: objects are
// deleted only once the new pack is whole.
func (c *cache) maybeGC(head plumbing.Hash) error {
	loose, packs, err := c.cacheSize()
	if err != nil || (loose < c.gcAt.loose && packs < c.gcAt.packs) {
		return err
	}
	c.gcAt = cacheLimits{loose + c.limits.loose, packs + c.limits.packs}
	if head.IsZero() {
		return nil
	}
	if !c.lock.tryExclusive() {
		// Someone else has the cache open: next time. Between losing the
		// shared lock and taking it again, that process may collect the
		// cache: read its packs afresh, and view refetches when this
		// Branch's head went with the collection.
		err := c.lock.shared()
		c.reindex()
		return err
	}
	defer c.lock.shared()
	kept, err := c.gc(head)
	if err != nil {
		return fmt.Errorf("collect the local state repository %q: %w", c.path, err)
	}
	// The next collection waits for as many new objects as this one kept
	// (at least the limit), so that collecting a large head costs each
	// save a constant share, however long the run.
	c.gcAt = cacheLimits{max(c.limits.loose, kept), c.limits.packs + 1}
	c.looseBase, c.objs.written = 0, 0
	return nil
}

// cacheSize returns how many objects were added to the cache since the
// last collection, and how many packs it holds. The loose objects are
// counted once per Branch (or after a collection); then those this Branch
// stored are added (the workspace's changed files are counted at the next
// count).
func (c *cache) cacheSize() (loose, packs int, err error) {
	var s gcStorer = c.store
	ps, err := s.ObjectPacks()
	if err != nil {
		return 0, 0, err
	}
	if c.looseBase < 0 {
		n := 0
		if err := s.ForEachObjectHash(func(plumbing.Hash) error { n++; return nil }); err != nil {
			return 0, 0, err
		}
		c.looseBase, c.objs.written = n, 0
	}
	return c.looseBase + c.objs.written, len(ps), nil
}

// gc writes the objects of the head to one pack, then deletes every loose
// object and every other pack, and returns how many objects it kept.
// Callers hold the cache exclusively.
func (c *cache) gc(head plumbing.Hash) (int, error) {
	keep, err := c.reachable(head)
	if err != nil {
		return 0, err
	}
	return len(keep), c.repack(head, keep)
}

// repack writes keep to one pack and deletes every other object.
func (c *cache) repack(head plumbing.Hash, keep []plumbing.Hash) error {
	var s gcStorer = c.store
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
	_, err = packfile.NewEncoder(w, c.store, false).Encode(keep, 10)
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
	c.reindex()
	c.haves = []plumbing.Hash{head}
	return nil
}

// reindex forgets what the store knew of its packs and the decoded trees,
// after a collection.
func (c *cache) reindex() {
	c.store.Reindex()
	clear(c.objs.trees)
}

// reachable returns commit h and every object of its tree (never a
// submodule's commit, which belongs to another repository).
func (c *cache) reachable(h plumbing.Hash) ([]plumbing.Hash, error) {
	commit, err := object.GetCommit(c.store, h)
	if err != nil {
		return nil, err
	}
	objs, err := gitremote.NewObjects(c.objs.tree, commit.TreeHash, plumbing.ZeroHash)
	return append([]plumbing.Hash{h}, objs...), err
}

// readHint returns the head this cache last saw, if the store has it.
func (c *cache) readHint() []plumbing.Hash {
	data, err := readHintFile(c.hint)
	if err != nil {
		return nil
	}
	h := plumbing.NewHash(strings.TrimSpace(string(data)))
	if h.IsZero() || c.store.HasEncodedObject(h) != nil {
		return nil
	}
	return []plumbing.Hash{h}
}

// saw records that the remote has commit h and the store holds it whole,
// and writes the hint.
func (c *cache) saw(h plumbing.Hash) {
	if h.IsZero() || (len(c.haves) > 0 && c.haves[0] == h) {
		return
	}
	c.haves = append([]plumbing.Hash{h}, c.haves...)
	if len(c.haves) > maxHaves {
		c.haves = c.haves[:maxHaves]
	}
	c.writeHint(h)
}

// writeHint records h as the head the repository holds whole. The hint is
// an optimisation: a failure to write it costs a fuller fetch.
func (c *cache) writeHint(h plumbing.Hash) {
	file := c.hint
	if os.MkdirAll(filepath.Dir(file), 0o755) == nil {
		_ = workspace.Atomic{Perm: 0o644}.WriteFile(file, []byte(h.String()+"\n"))
	}
}

// maxHaves bounds the commits offered to the remote as already present.
const maxHaves = 4

// readHintFile reads a hint without blocking on a FIFO in its place: the
// cache lies in the loop root by default, within agents' reach.
func readHintFile(path string) ([]byte, error) {
	dir, name := filepath.Split(path)
	r, err := workspace.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return workspace.ReadFile(r, name, 1<<10)
}
