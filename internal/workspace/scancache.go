package workspace

import (
	"context"
	"time"
)

// ScanCache keeps what a scan (Writer.ScanCached) read of each regular
// file, so that the next scan of the same paths reads again only files
// whose stat changed or that were racily clean (Stamp.Vouches). A rewrite
// that puts the mtime back still changes the ctime, which only the kernel
// sets. It is safe for concurrent use; use one per set of paths scanned.
type ScanCache struct{ c statCache[Entry] }

// NewScanCache returns an empty cache.
func NewScanCache() *ScanCache { return &ScanCache{} }

// begin starts a scan (nil for a nil c).
func (c *ScanCache) begin() *statPass[Entry] {
	if c == nil {
		return nil
	}
	return c.c.begin(time.Now())
}

// end keeps what the scan p found.
func (c *ScanCache) end(p *statPass[Entry]) {
	if c != nil {
		c.c.end(p)
	}
}

// recordCached is record of the entry name of l (at rel, lstat: s), from
// the cache p when it vouches for the file.
func recordCached(ctx context.Context, p *statPass[Entry], l *dirList, rel, name string, s fileStat) Entry {
	if p == nil || !s.key.mode.IsRegular() {
		return record(ctx, l.r, name, s.fi)
	}
	e, ok := p.vouched(rel, s.key)
	if !ok {
		e = record(ctx, l.r, name, s.fi)
	}
	if e.Err == "" {
		p.keep(rel, s.key, e)
	}
	return e
}
