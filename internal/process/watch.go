package process

import (
	"context"
	"sync"
	"time"
)

// watcher terminates a run's group when its timeout elapses or its
// context is done, whichever comes first. It starts no goroutine of its
// own: the timer and the context start one to call it, only when they
// fire, so a child that ends in time costs no hand-off between goroutines.
type watcher struct {
	r      *run
	exited chan struct{} // closed once the leader has exited (not yet reaped)
	once   sync.Once     // the one termination, by whichever fires first

	timedOut, canceled bool // set by the termination, inside once

	stops []func() bool   // stop each trigger; false: it has fired
	ended []chan struct{} // closed when each trigger's call has returned
}

// watch arms the triggers of r's termination: spec.Timeout and ctx.
func (r *run) watch(ctx context.Context) *watcher {
	w := &watcher{r: r, exited: make(chan struct{})}
	if r.spec.Timeout > 0 {
		t := time.AfterFunc(r.spec.Timeout, w.trigger(true))
		w.stops = append(w.stops, t.Stop)
	}
	if ctx.Done() != nil {
		w.stops = append(w.stops, context.AfterFunc(ctx, w.trigger(false)))
	}
	return w
}

// trigger returns the function a trigger calls when it fires: the first to
// fire terminates the group and records why; a later one finds it done.
func (w *watcher) trigger(timedOut bool) func() {
	ended := make(chan struct{})
	w.ended = append(w.ended, ended)
	return func() {
		defer close(ended)
		w.once.Do(func() {
			w.timedOut, w.canceled = timedOut, !timedOut
			w.r.terminate(w.exited)
		})
	}
}

// stop is called once the leader has exited, and before it is reaped, so
// that a termination never signals a group whose id may have been reused.
// It disarms the triggers and waits for those that fired to return — a
// termination under way waits, as ever, for the group to empty or its
// grace to pass — and reports why the group was terminated, if it was.
func (w *watcher) stop() (timedOut, canceled bool) {
	close(w.exited)
	for i, stop := range w.stops {
		if !stop() {
			<-w.ended[i]
		}
	}
	return w.timedOut, w.canceled
}
