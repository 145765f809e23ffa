package state

import "time"

// SetClock makes d stamp checkpoints with now instead of time.Now.
func SetClock(d *Dir, now func() time.Time) { d.now = now }

// SetBranchClock makes b stamp checkpoints and commits with now instead of
// time.Now.
func SetBranchClock(b *Branch, now func() time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = now
}

// SetCacheLimits makes b collect its local state repository past loose
// loose objects or packs packs (see maybeGC).
func SetCacheLimits(b *Branch, loose, packs int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limits = cacheLimits{loose, packs}
	b.gcAt = b.limits
}
