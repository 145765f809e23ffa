package backoff_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/backoff"
)

// TestDoStopsWithContext: a context that ends stops the retries, and the
// error keeps both why it stopped and op's last failure.
func TestDoStopsWithContext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		run     func(ctx context.Context, cancel context.CancelFunc, p backoff.Policy, op func(context.Context) (int, error)) (int, error)
		sleep   bool // wait with a hook that cancels ctx, not a timer
		tries   int
		wantErr string
		wantIs  []error
	}{
		{
			name: "during the timer's wait", tries: 1,
			run: func(ctx context.Context, cancel context.CancelFunc, p backoff.Policy, op func(context.Context) (int, error)) (int, error) {
				ctx, stop := context.WithTimeout(ctx, 20*time.Millisecond)
				defer stop()
				return backoff.Do(ctx, p, op) // the first wait is a minute
			},
			wantErr: "context deadline exceeded while waiting to retry: busy",
			wantIs:  []error{context.DeadlineExceeded, errBusy},
		},
		{
			name: "during the hook's wait", sleep: true, tries: 1,
			run: func(ctx context.Context, cancel context.CancelFunc, p backoff.Policy, op func(context.Context) (int, error)) (int, error) {
				return backoff.Do(ctx, p, op)
			},
			wantErr: "context canceled while waiting to retry: busy",
			wantIs:  []error{context.Canceled, errBusy},
		},
		{
			name: "a try that ends after it is not retried", tries: 1,
			run: func(ctx context.Context, cancel context.CancelFunc, p backoff.Policy, op func(context.Context) (int, error)) (int, error) {
				return backoff.Do(ctx, p, func(ctx context.Context) (int, error) {
					cancel()
					return op(ctx)
				})
			},
			wantErr: "busy", wantIs: []error{errBusy},
		},
		{
			name: "before the first try", tries: 0,
			run: func(ctx context.Context, cancel context.CancelFunc, p backoff.Policy, op func(context.Context) (int, error)) (int, error) {
				cancel()
				return backoff.Do(ctx, p, op)
			},
			wantErr: "context canceled", wantIs: []error{context.Canceled},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := backoff.Policy{Tries: 2, First: time.Minute, Budget: backoff.Unbounded}
			if tc.sleep {
				p.Sleep = func(ctx context.Context, _ time.Duration) error {
					cancel()
					return ctx.Err()
				}
			}
			op, tries := script(backoff.Again(errBusy), backoff.Again(errBusy))
			_, err := tc.run(ctx, cancel, p, op)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			for _, is := range tc.wantIs {
				if !errors.Is(err, is) {
					t.Errorf("err %q is not %q", err, is)
				}
			}
			if errors.Is(err, backoff.ErrGaveUp) {
				t.Errorf("err %q says it gave up; the context stopped it", err)
			}
			if *tries != tc.tries {
				t.Errorf("%d tries, want %d", *tries, tc.tries)
			}
		})
	}
}
