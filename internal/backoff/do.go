package backoff

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = wait
	}
	step := p.steps()
	var waited time.Duration
	for tries := 1; ; tries++ {
		v, err := op(ctx)
		var mark *again
		if err == nil || !errors.As(err, &mark) || ctx.Err() != nil {
			return v, err
		}
		d := step() // an asked-for wait takes the place of this step
		if mark.exact {
			d = mark.after
		}
		if tries >= p.Tries || d > p.Budget-waited {
			return v, fmt.Errorf("%w after %s: %w", ErrGaveUp, phrase.Plural(tries, "attempt", "attempts"), err)
		}
		waited += d
		if werr := sleep(ctx, d); werr != nil {
			return v, fmt.Errorf("%w while waiting to retry: %w", werr, err)
		}
	}
}

// wait sleeps d on a timer, or less when ctx ends first.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
