package backoff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sethvargo/go-retry"

	"github.com/loop-action/loop-action/internal/phrase"
)

// Do runs op, and runs it again after a failure it marked with Again or
// After, waiting as p says, until it succeeds or fails unmarked, the tries
// or the budget run out, or ctx ends. It returns op's last value (what op
// returned, even with an error) and:
//
//   - nil when op succeeded;
//   - op's error as it is when op did not mark it, or when ctx had ended
//     by the time op returned;
//   - "gave up after N attempts: <op's error>", which is ErrGaveUp, when
//     the tries or the budget ran out;
//   - "<ctx's error> while waiting to retry: <op's error>" when ctx ended
//     during a wait;
//   - ctx's error when it had ended before the first try: op never runs.
func Do[T any](ctx context.Context, p Policy, op func(ctx context.Context) (T, error)) (T, error) {
	r := &run[T]{p: p, ctx: ctx, steps: p.steps()}
	v, err := retry.DoValue(ctx, retry.BackoffFunc(r.next), r.try(op))
	return r.result(v, err)
}

// run is one Do: what go-retry's loop needs beyond the error.
type run[T any] struct {
	p     Policy
	ctx   context.Context
	steps retry.Backoff

	tries   int
	last    T
	err     error  // op's last error
	mark    *again // its mark, nil when it was not worth another try
	waited  time.Duration
	stopped bool  // the tries or the budget ran out
	waitErr error // why p.Sleep ended a wait early
}

// try is op for go-retry: it keeps the last answer and tells go-retry
// which failures to retry.
func (r *run[T]) try(op func(ctx context.Context) (T, error)) retry.RetryFuncValue[T] {
	return func(ctx context.Context) (T, error) {
		r.tries++
		r.last, r.err = op(ctx)
		r.mark = nil
		var a *again
		if r.err == nil || !errors.As(r.err, &a) || ctx.Err() != nil {
			return r.last, r.err
		}
		r.mark = a
		return r.last, retry.RetryableError(r.err)
	}
}

// next is the wait before the next try, or stop.
func (r *run[T]) next() (time.Duration, bool) {
	if r.tries >= r.p.Tries {
		r.stopped = true
		return 0, true
	}
	d, _ := r.steps.Next()
	if r.mark.exact {
		d = r.mark.after
	}
	if d > r.p.Budget-r.waited {
		r.stopped = true
		return 0, true
	}
	r.waited += d
	if r.p.Sleep == nil {
		return d, false
	}
	if err := r.p.Sleep(r.ctx, d); err != nil {
		r.waitErr = err
		return 0, true
	}
	return 0, false
}

// result is what Do returns, from what go-retry's loop returned.
func (r *run[T]) result(v T, err error) (T, error) {
	switch {
	case err == nil:
		return v, nil
	case r.mark == nil: // op's own failure, or ctx ended before any try
		return r.last, err
	case r.waitErr != nil:
		return r.last, fmt.Errorf("%w while waiting to retry: %w", r.waitErr, r.err)
	case r.stopped:
		return r.last, fmt.Errorf("%w after %s: %w", ErrGaveUp, phrase.Plural(r.tries, "attempt", "attempts"), r.err)
	}
	// go-retry's own wait ended with ctx: it returns ctx's cause.
	return r.last, fmt.Errorf("%w while waiting to retry: %w", err, r.err)
}
