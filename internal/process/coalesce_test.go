package process

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCoalescerNeverServesAnEarlierSweep: a caller of after gets the
// result of a sweep that started after it called, never of one already
// running; callers that arrive during a sweep share the next one.
func TestCoalescerNeverServesAnEarlierSweep(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	c := &coalescer{sweep: func() error {
		n := started.Add(1)
		<-release
		return fmt.Errorf("sweep %d", n)
	}}
	type served struct {
		before int32 // sweeps started when the call began
		err    error
	}
	results := make(chan served, 5)
	call := func() {
		before := started.Load()
		results <- served{before, c.after()}
	}
	go call()
	waitUntil(t, func() bool { return started.Load() == 1 })
	for range 4 {
		go call()
	}
	waitUntil(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.next != nil })
	time.Sleep(50 * time.Millisecond) // let the other callers arrive too
	close(release)                    // every sweep from now on returns at once
	sweeps := map[string]int{}
	for range 5 {
		r := <-results
		var n int32
		if _, err := fmt.Sscanf(r.err.Error(), "sweep %d", &n); err != nil {
			t.Fatal(err)
		}
		if n <= r.before {
			t.Errorf("a call made after %d sweeps had started got the result of sweep %d", r.before, n)
		}
		sweeps[r.err.Error()]++
	}
	if got := started.Load(); got > 3 {
		t.Errorf("5 calls, 4 of them during the first sweep, ran %d sweeps (%v); want at most 3", got, sweeps)
	}
}

// TestCoalescerConcurrent: many callers at once all return, each with a
// sweep's result.
func TestCoalescerConcurrent(t *testing.T) {
	var n atomic.Int32
	c := &coalescer{sweep: func() error { n.Add(1); return errors.New("swept") }}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if err := c.after(); err == nil || err.Error() != "swept" {
				t.Errorf("after() = %v", err)
			}
		})
	}
	wg.Wait()
	if n.Load() == 0 || n.Load() > 100 {
		t.Errorf("%d sweeps for 100 calls", n.Load())
	}
}

// waitUntil polls cond for up to ten seconds.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 10000 {
			t.Fatal("condition not reached in ten seconds")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCoalescerSettles: callers that arrive while the maker of a sweep
// settles share that sweep.
func TestCoalescerSettles(t *testing.T) {
	var sweeps atomic.Int32
	arrived := make(chan struct{})
	var waiting atomic.Int32
	c := &coalescer{
		sweep:  func() error { sweeps.Add(1); return nil },
		settle: func() { <-arrived },
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			waiting.Add(1)
			if err := c.after(); err != nil {
				t.Error(err)
			}
		})
	}
	waitUntil(t, func() bool { return waiting.Load() == 5 })
	time.Sleep(50 * time.Millisecond) // let them all reach after
	close(arrived)
	wg.Wait()
	if n := sweeps.Load(); n != 1 {
		t.Errorf("5 callers arriving while the first settled: %d sweeps, want 1", n)
	}
}
