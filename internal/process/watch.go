package process

import (
	"context"
	"time"
)

// watcher terminates a run's group when its timeout elapses or its
// context is done, whichever comes first.
type watcher struct {
	exited chan struct{} // closed once the leader has exited (not yet reaped)
	why    chan [2]bool  // timedOut, canceled: sent when the watch is over
}

// watch starts watching r's timeout and ctx.
func (r *run) watch(ctx context.Context) *watcher {
	w := &watcher{exited: make(chan struct{}), why: make(chan [2]bool, 1)}
	go func() {
		var timeout <-chan time.Time
		if r.spec.Timeout > 0 {
			t := time.NewTimer(r.spec.Timeout)
			defer t.Stop()
			timeout = t.C
		}
		var why [2]bool
		select {
		case <-w.exited:
		case <-timeout:
			why[0] = true
		case <-ctx.Done():
			why[1] = true
		}
		if why[0] || why[1] {
			r.terminate(w.exited)
		}
		w.why <- why
	}()
	return w
}

// stop is called once the leader has exited, and before it is reaped, so
// that a termination never signals a group whose id may have been reused.
// It waits for a termination under way — which waits, as ever, for the
// group to empty or its grace to pass — and reports why the group was
// terminated, if it was.
func (w *watcher) stop() (timedOut, canceled bool) {
	close(w.exited)
	why := <-w.why
	return why[0], why[1]
}
