package process

import (
	"sync"
	"time"
)

// Children that end together share their sweeps. Run must sweep after its
// child has exited; any sweep that starts after that serves it as well as
// one of its own. So the first Run that finds no sweep pending makes one,
// which starts once no other child is running or batchWait has passed,
// and once the sweep running (if any) is done; every Run that arrives
// before it starts shares it. Ten children ending within a few
// milliseconds cost a few sweeps instead of ten, each of which would hold
// off every child starting. A sweep already running never serves a Run
// that arrives after it started. The wait only delays when Run returns:
// whatever the child left behind is killed before it does, and meanwhile
// other untrusted children run anyway.

// batchWait bounds how long a Run waits for other children to end before
// it sweeps.
const batchWait = 5 * time.Millisecond

// coalescer shares sweeps between the callers of after.
type coalescer struct {
	sweep  func() error
	settle func() // called by the maker of a sweep before it starts, to let others join; nil waits for nothing

	mu   sync.Mutex
	cur  *round // the sweep running, or nil
	next *round // the sweep to start next, shared by whoever arrives before it starts
}

// round is one sweep that several callers may share.
type round struct {
	done chan struct{}
	err  error
}

// runSweeps shares the sweeps Run does after its children.
var runSweeps = &coalescer{
	sweep:  func() error { return sweepLive(false) },
	settle: func() { noneLive(batchWait) },
}

// after sweeps, or shares a sweep that starts after it was called, and
// returns that sweep's error. The first caller to find no sweep pending
// makes one and runs it: after settle, and once the sweep running (if any)
// is done; whoever arrives until it starts shares it.
func (c *coalescer) after() error {
	c.mu.Lock()
	if r := c.next; r != nil { // not started yet: share it
		c.mu.Unlock()
		<-r.done
		return r.err
	}
	r := &round{done: make(chan struct{})}
	c.next = r
	c.mu.Unlock()
	if c.settle != nil {
		c.settle()
	}
	c.mu.Lock()
	prev := c.cur
	c.mu.Unlock()
	if prev != nil {
		<-prev.done
	}
	c.mu.Lock()
	c.cur, c.next = r, nil // it starts: whoever arrives now waits for the next
	c.mu.Unlock()
	return c.run(r)
}

// run sweeps, then hands the result to every caller sharing r.
func (c *coalescer) run(r *round) error {
	r.err = c.sweep()
	c.mu.Lock()
	if c.cur == r {
		c.cur = nil
	}
	c.mu.Unlock()
	close(r.done)
	return r.err
}
