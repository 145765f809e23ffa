package workspace

import (
	"io/fs"
	"sync"
	"time"
)

// racyWindow is how much older than the start of the read that found it a
// file's mtime must be before a cached blob id is trusted: git's
// racy-clean rule with a margin. A rewrite in the same timestamp tick as
// the write before keeps the mtime, and a tick is a second on some file
// systems, two on FAT, and on Linux a few milliseconds of a coarse clock
// that may lag time.Now. Git compares with its index file's mtime; we
// write nothing, so we compare with our own clock and leave room for both.
const racyWindow = 2 * time.Second

// StatKey is what must be unchanged for a cached blob id to be reused: a
// file's size, mode, modification and status change times, device and
// inode (the last three where the platform has them).
type StatKey struct {
	size  int64
	mtime int64 // UnixNano
	ctime int64 // UnixNano where available, else 0
	dev   uint64
	ino   uint64
	mode  fs.FileMode
}

// KeyOf returns the cache key of a file's lstat or fstat result.
func KeyOf(fi fs.FileInfo) StatKey {
	k := StatKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	k.dev, k.ino, k.ctime = statIDs(fi)
	return k
}

// Stamp is a stat key and when the read it stands for started.
type Stamp struct {
	Key StatKey
	At  time.Time
}

// Vouches reports whether a file whose stat is now k still holds what was
// read when s was taken: the stat is unchanged and the file was not
// racily clean then (see racyWindow). A zero Stamp vouches for nothing.
func (s Stamp) Vouches(k StatKey) bool {
	return s.Key == k && !s.At.IsZero() && s.Key.mtime < s.At.Add(-racyWindow).UnixNano()
}

// statCache keeps what the last completed pass over a set of paths found
// of each file, so that the next pass takes what a file's stat still
// vouches for instead of reading it again: the [Hasher]'s blob ids, the
// [ScanCache]'s records. A pass's start is kept once, not per entry: an
// entry carried into a later pass was vouched for by an earlier start,
// and a later one vouches for it too. It is safe for concurrent use; a
// pass is used by one goroutine.
type statCache[V any] struct {
	mu   sync.Mutex
	last map[string]stamped[V] // never modified once published
	at   time.Time             // when the pass that made last started
}

// stamped is what a pass found of a file whose stat was key.
type stamped[V any] struct {
	key StatKey
	v   V
}

// statPass is one pass: it reads the last entries and makes the next.
type statPass[V any] struct {
	last, next map[string]stamped[V]
	lastAt, at time.Time
}

// begin starts a pass, started at at.
func (c *statCache[V]) begin(at time.Time) *statPass[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &statPass[V]{last: c.last, lastAt: c.at, next: make(map[string]stamped[V], len(c.last)), at: at}
}

// end keeps what the pass p found: call it only for a pass that completed.
func (c *statCache[V]) end(p *statPass[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last, c.at = p.next, p.at
}

// vouched returns what the last pass found at rel, if the stat k still
// vouches for it.
func (p *statPass[V]) vouched(rel string, k StatKey) (V, bool) {
	s, ok := p.last[rel]
	if !ok || !(Stamp{Key: s.key, At: p.lastAt}).Vouches(k) {
		var zero V
		return zero, false
	}
	return s.v, true
}

// keep records v, found at rel of a file whose stat was k, for the next pass.
func (p *statPass[V]) keep(rel string, k StatKey, v V) { p.next[rel] = stamped[V]{k, v} }

// cacheEntry is a blob id the Hasher computed from a file.
type cacheEntry struct {
	id   ObjectID
	rel  string     // the file's path, the key it is cached under
	conv *converted // how the file converted, nil when nothing converts it
}

// converted is how a cached file converted: its id holds while that does.
// Out of line, so that a map holds a cacheEntry inline.
type converted struct {
	cv  convs
	why string // why no checkout reproduces the file, if none does
}

// convertedAs is what a cache entry records of a file converted by cv.
func convertedAs(cv *convs, why string) *converted {
	if cv == nil {
		return nil
	}
	return &converted{cv: *cv, why: why}
}

// same reports whether the entry was read converting as cv does.
func (c cacheEntry) same(cv *convs) bool {
	if c.conv == nil || cv == nil {
		return c.conv == nil && cv == nil
	}
	return c.conv.cv == *cv
}

// why is why no checkout reproduces the cached file, or "".
func (c cacheEntry) why() string {
	if c.conv == nil {
		return ""
	}
	return c.conv.why
}

// IndexStat returns what a git index entry records of the file: size,
// mtime and ctime (UnixNano), device and inode.
func (k StatKey) IndexStat() (size, mtime, ctime int64, dev, ino uint64) {
	return k.size, k.mtime, k.ctime, k.dev, k.ino
}
