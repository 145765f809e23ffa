package workspace

import (
	"context"
	"sync"
	"time"
)

// ScanCache keeps what a scan (Writer.ScanCached) read of each regular
// file, so that the next scan of the same paths reads again only the files
// whose stat changed, or that were racily clean when read: the rule the
// Hasher's stat cache follows (Stamp.Vouches). A rewrite that keeps a
// file's size and puts its mtime back still changes its ctime, which only
// the kernel sets. The cache holds what its last scan found, nothing more.
// It is safe for concurrent use; use one per set of paths scanned.
type ScanCache struct {
	mu    sync.Mutex
	files map[string]cached
	next  map[string]cached // what the scan in progress found
	at    time.Time         // when the scan in progress started
}

type cached struct {
	stamp Stamp
	entry Entry
}

// NewScanCache returns an empty cache.
func NewScanCache() *ScanCache { return &ScanCache{files: map[string]cached{}} }

// begin starts a scan: what it finds replaces the cache's content when it
// ends. It returns c, nil for a nil c.
func (c *ScanCache) begin() *ScanCache {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next, c.at = map[string]cached{}, time.Now()
	return c
}

// end keeps what the scan found.
func (c *ScanCache) end() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files, c.next = c.next, nil
}

// record is recordStat, from the cache when it vouches for the file.
func (c *ScanCache) record(ctx context.Context, l *dirList, rel, name string, s fileStat) Entry {
	if c == nil || !s.key.mode.IsRegular() {
		return recordStat(ctx, l, name, s)
	}
	k := s.key
	c.mu.Lock()
	old, ok := c.files[rel]
	at := c.at
	c.mu.Unlock()
	e := old.entry
	if !ok || !old.stamp.Vouches(k) {
		e = recordStat(ctx, l, name, s)
		old.stamp = Stamp{Key: k, At: at}
	}
	if e.Err == "" {
		c.mu.Lock()
		c.next[rel] = cached{stamp: old.stamp, entry: e}
		c.mu.Unlock()
	}
	return e
}

// recordStat is record of the entry name of directory l, whose lstat
// found s.
func recordStat(ctx context.Context, l *dirList, name string, s fileStat) Entry {
	return record(ctx, l.r, name, s.fi)
}
