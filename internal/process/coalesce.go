package process

import "sync"

// Children that end together share their sweeps. Run must sweep after its
// child has exited; any sweep that starts after that serves it as well as
// one of its own. So a Run whose child exits while a sweep is running
// waits for the next one, which every Run arriving meanwhile shares: ten
// children ending at once cost two or three sweeps instead of ten, each of
// which would hold off every child starting. A sweep already running never
// serves a Run that arrives after it started.

// coalescer shares sweeps between the callers of after.
type coalescer struct {
	sweep func() error

	mu   sync.Mutex
	cur  *round // the sweep running, or nil
	next *round // the sweep to start once cur is done, shared by whoever arrived during cur
}

// round is one sweep that several callers may share.
type round struct {
	done chan struct{}
	err  error
}

// runSweeps shares the sweeps Run does after its children.
var runSweeps = &coalescer{sweep: func() error { return sweepLive(false) }}

// after sweeps, or shares a sweep that starts after it was called, and
// returns that sweep's error.
func (c *coalescer) after() error {
	c.mu.Lock()
	switch {
	case c.next != nil: // not started yet: share it
		r := c.next
		c.mu.Unlock()
		<-r.done
		return r.err
	case c.cur == nil: // none running: this call's own
		r := &round{done: make(chan struct{})}
		c.cur = r
		c.mu.Unlock()
		return c.run(r)
	}
	r := &round{done: make(chan struct{})}
	c.next = r
	prev := c.cur
	c.mu.Unlock()
	<-prev.done
	c.mu.Lock()
	c.cur, c.next = r, nil
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
