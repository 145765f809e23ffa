package state

import (
	"context"
	"time"
)

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
	b.cache.limits = cacheLimits{loose, packs}
	b.cache.gcAt = b.cache.limits
}

// SeedRun commits iterations cp.Iteration+1 to n of cp's run to the
// branch as one commit, with the files the saves of those iterations'
// commits would leave (built by the code Save uses, without pushing
// each), and updates cp as those saves would. Benchmarks use it to set
// up long runs quickly.
func SeedRun(ctx context.Context, b *Branch, cp *Checkpoint, n int, commit func(int) Commit) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.view(ctx); err != nil {
		return err
	}
	prev := b.tree
	for it := cp.Iteration + 1; it <= n; it++ {
		cp.Iteration = it
		next, f, err := b.prepare(ctx, cp, commit(it))
		if err != nil {
			return err
		}
		if b.tree, _, err = b.build(cp, f); err != nil {
			return err
		}
		*cp = next
	}
	root := b.tree
	b.tree = prev
	head, err := b.push(ctx, root, cp)
	if err != nil {
		return err
	}
	b.head, b.tree = head, root
	b.cache.saw(head)
	return nil
}

// CollectCache collects b's local state repository now (see maybeGC).
func CollectCache(b *Branch) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cache.gcAt = cacheLimits{}
	return b.cache.maybeGC(b.head)
}

// SetBeforePush makes each push of b's saves run fn first, and b's retry
// waits return at once: a test moves the branch under the save with it.
func SetBeforePush(b *Branch, fn func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.beforePush = fn
	b.retry.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
}

// ExchangeTime is the time b's saves spent in receive-pack exchanges.
func ExchangeTime(b *Branch) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exchange
}
