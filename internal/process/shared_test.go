package process

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSharedSweepsNeverServeAnEarlierSweep: a caller of after gets the
// result of a sweep that started after it called, never of one already
// running; callers that arrive during a sweep share the next ones.
func TestSharedSweepsNeverServeAnEarlierSweep(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	s := &sharedSweeps{sweep: func() error {
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
		results <- served{before, s.after()}
	}
	go call()
	for started.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	for range 4 {
		go call()
	}
	time.Sleep(50 * time.Millisecond) // let them arrive: only the count below depends on it
	close(release)                    // every sweep from now on returns at once
	for range 5 {
		r := <-results
		var n int32
		if _, err := fmt.Sscanf(r.err.Error(), "sweep %d", &n); err != nil {
			t.Fatal(err)
		}
		if n <= r.before {
			t.Errorf("a call made after %d sweeps had started got the result of sweep %d", r.before, n)
		}
	}
	if got := started.Load(); got > 3 {
		t.Errorf("5 calls, 4 of them during the first sweep, ran %d sweeps; want at most 3", got)
	}
}

// TestSharedSweepsConcurrent: many callers at once all return, each with
// a sweep's result.
func TestSharedSweepsConcurrent(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	s := &sharedSweeps{sweep: func() error { n.Add(1); return errors.New("swept") }}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if err := s.after(); err == nil || err.Error() != "swept" {
				t.Errorf("after() = %v", err)
			}
		})
	}
	wg.Wait()
	if n.Load() == 0 || n.Load() > 100 {
		t.Errorf("%d sweeps for 100 calls", n.Load())
	}
}
