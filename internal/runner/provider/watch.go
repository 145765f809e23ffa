package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"
)

// maxWatchedLine bounds the part of a line the watcher keeps while waiting
// for its end: a longer line is matched on its first maxWatchedLine bytes.
const maxWatchedLine = 64 << 10

// errIdle and authFailure are why a watcher ended a call.
var errIdle = errors.New("idle")

// authFailure is a line of output that matched the provider's auth_failure.
type authFailure struct{ line string }

func (a authFailure) Error() string { return "auth failure: " + a.line }

// watcher ends a call early, by cancelling its context with a cause: when
// the agent prints nothing on stdout for idle (if idle > 0), or prints a
// line that auth matches (if auth is not nil). It is the process's
// StdoutTee.
type watcher struct {
	cancel context.CancelCauseFunc
	auth   *regexp.Regexp
	idle   time.Duration
	timer  *time.Timer

	mu   sync.Mutex
	line []byte // the current line, so far
	done bool
}

// newWatcher starts watching; stop ends it.
func newWatcher(cancel context.CancelCauseFunc, auth *regexp.Regexp, idle time.Duration) *watcher {
	w := &watcher{cancel: cancel, auth: auth, idle: idle}
	if idle > 0 {
		w.timer = time.AfterFunc(idle, func() { cancel(errIdle) })
	}
	return w
}

// Write takes stdout as it arrives. It never fails.
func (w *watcher) Write(p []byte) (int, error) {
	if w.timer != nil {
		w.timer.Reset(w.idle)
	}
	if w.auth == nil {
		return len(p), nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for rest := p; len(rest) > 0 && !w.done; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			w.keep(rest)
			break
		}
		w.keep(rest[:i])
		w.match()
		rest = rest[i+1:]
	}
	return len(p), nil
}

// keep appends b to the current line, up to maxWatchedLine bytes.
func (w *watcher) keep(b []byte) {
	if room := maxWatchedLine - len(w.line); room > 0 {
		w.line = append(w.line, b[:min(len(b), room)]...)
	}
}

// match ends the call when the line that just ended matches.
func (w *watcher) match() {
	if w.auth.Match(w.line) {
		w.done = true
		w.cancel(authFailure{line: lastLine(w.line)})
	}
	w.line = w.line[:0]
}

// stop stops the idle timer.
func (w *watcher) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// watchCause says why the watcher ended a call whose context ctx is, or ""
// when it did not (the call's own parent context ended it, or nothing did).
func watchCause(parent, ctx context.Context, idle time.Duration) string {
	if parent.Err() != nil {
		return ""
	}
	var af authFailure
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errIdle):
		return fmt.Sprintf("printed nothing for %s (idle_timeout)", roundDuration(idle))
	case errors.As(cause, &af):
		return "reported an authentication failure (auth_failure)"
	}
	return ""
}
