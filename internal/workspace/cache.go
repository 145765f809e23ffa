package workspace

import (
	"io/fs"
	"time"
)

// racyWindow is how much older than the start of the snapshot that read it a
// file's mtime must be before its cached blob id is trusted.
//
// This is git's racy-clean rule with a safety margin. A file rewritten after
// we read it keeps the same mtime if the rewrite falls in the same timestamp
// tick as the previous write: one second on some file systems, two on FAT,
// and a few milliseconds on Linux, whose file timestamps come from a coarse
// clock that may lag time.Now. Git compares mtimes with the mtime of its
// index file; we write nothing, so we compare with our own clock instead and
// leave room for both granularity and lag. Files modified within the window
// are simply re-read on the next snapshot.
const racyWindow = 2 * time.Second

// statKey is what must be unchanged for a cached blob id to be reused.
type statKey struct {
	size  int64
	mtime int64 // UnixNano
	ctime int64 // UnixNano where available, else 0
	ino   uint64
	mode  fs.FileMode
}

// keyOf returns the cache key of a file's lstat or fstat result.
func keyOf(fi fs.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	k.ino, k.ctime = inodeAndCtime(fi)
	return k
}

// cacheEntry is a blob id computed from a file whose stat matched key.
type cacheEntry struct {
	key   statKey
	id    objectID
	stamp time.Time // start of the snapshot that read the file
}

// usable reports whether the entry may stand in for a file whose stat is k:
// the stat must be unchanged, and the file must not have been racily clean
// when it was read (modified less than racyWindow before that snapshot
// started), since a later same-size rewrite could then keep the same mtime.
func (e cacheEntry) usable(k statKey) bool {
	return e.key == k && e.key.mtime < e.stamp.Add(-racyWindow).UnixNano()
}
