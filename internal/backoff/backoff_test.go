package backoff_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/backoff"
)

var errBusy = errors.New("busy")

// clock records the waits instead of sleeping them.
type clock struct {
	mu sync.Mutex
	ds []time.Duration
}

func (c *clock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ds = append(c.ds, d)
	return ctx.Err()
}

func (c *clock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ds
}

// script is an op that answers with its errors in turn, then succeeds; it
// returns the number of its try as the value.
func script(errs ...error) (op func(context.Context) (int, error), tries *int) {
	tries = new(int)
	return func(context.Context) (int, error) {
		*tries++
		if *tries <= len(errs) {
			return *tries, errs[*tries-1]
		}
		return *tries, nil
	}, tries
}

func repeat(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func TestDo(t *testing.T) {
	t.Parallel()
	s := time.Second
	again := backoff.Again(errBusy)
	for _, tc := range []struct {
		name    string
		policy  backoff.Policy
		errs    []error
		waits   []time.Duration
		tries   int
		wantErr string // "" for success
		gaveUp  bool
	}{
		{
			name:   "grows by its factor and gives up after the tries",
			policy: backoff.Policy{Tries: 5, First: 2 * s, Growth: 1.5, Budget: backoff.Unbounded},
			errs:   repeat(9, again), tries: 5,
			waits:   []time.Duration{2 * s, 3 * s, 4500 * time.Millisecond, 6750 * time.Millisecond},
			wantErr: "gave up after 5 attempts: busy", gaveUp: true,
		},
		{
			name:   "the cap bounds the growth",
			policy: backoff.Policy{Tries: 7, First: 20 * time.Millisecond, Growth: 2, Cap: 100 * time.Millisecond, Budget: backoff.Unbounded},
			errs:   repeat(6, again), tries: 7,
			waits: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond,
				100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
		},
		{
			name:   "a wait the other side asks for takes the place of a step",
			policy: backoff.Policy{Tries: 4, First: s, Growth: 2, Budget: backoff.Unbounded},
			errs:   []error{backoff.After(7*s, errBusy), backoff.After(0, errBusy), again}, tries: 4,
			waits: []time.Duration{7 * s, 0, 4 * s},
		},
		{
			name:   "a wait past the budget is not begun",
			policy: backoff.Policy{Tries: 4, First: s, Growth: 2, Budget: 2 * time.Minute},
			errs:   []error{backoff.After(time.Hour, errBusy)}, tries: 1,
			wantErr: "gave up after 1 attempt: busy", gaveUp: true,
		},
		{
			name:   "the budget counts every wait",
			policy: backoff.Policy{Tries: 10, First: s, Growth: 2, Budget: 5 * s},
			errs:   repeat(9, again), tries: 3,
			waits:   []time.Duration{s, 2 * s},
			wantErr: "gave up after 3 attempts: busy", gaveUp: true,
		},
		{
			name:   "a zero budget allows only zero waits",
			policy: backoff.Policy{Tries: 3, First: s, Budget: 0},
			errs:   []error{backoff.After(0, errBusy), again}, tries: 2,
			waits:   []time.Duration{0},
			wantErr: "gave up after 2 attempts: busy", gaveUp: true,
		},
		{
			name:   "an unmarked failure is final",
			policy: backoff.Policy{Tries: 5, First: s, Budget: backoff.Unbounded},
			errs:   []error{again, fmt.Errorf("quota: %w", errBusy)}, tries: 2,
			waits:   []time.Duration{s},
			wantErr: "quota: busy",
		},
		{
			name:   "a mark deep in the chain counts",
			policy: backoff.Policy{Tries: 2, First: s, Budget: backoff.Unbounded},
			errs:   []error{fmt.Errorf("put block: %w", again)}, tries: 2,
			waits: []time.Duration{s},
		},
		{
			name:   "one try never waits",
			policy: backoff.Policy{Tries: 1, First: s, Budget: backoff.Unbounded},
			errs:   []error{again}, tries: 1,
			wantErr: "gave up after 1 attempt: busy", gaveUp: true,
		},
		{
			name:   "no tries is one try",
			policy: backoff.Policy{First: s, Budget: backoff.Unbounded},
			errs:   []error{again}, tries: 1,
			wantErr: "gave up after 1 attempt: busy", gaveUp: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &clock{}
			tc.policy.Sleep = c.sleep
			op, tries := script(tc.errs...)
			v, err := backoff.Do(context.Background(), tc.policy, op)
			if got := fmt.Sprint(err); (err == nil) != (tc.wantErr == "") || err != nil && got != tc.wantErr {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, errBusy) {
				t.Errorf("err %q does not wrap op's", err)
			}
			if errors.Is(err, backoff.ErrGaveUp) != tc.gaveUp {
				t.Errorf("errors.Is(%q, ErrGaveUp) = %v, want %v", err, !tc.gaveUp, tc.gaveUp)
			}
			if *tries != tc.tries || v != tc.tries {
				t.Errorf("%d tries returning %d, want %d: the last value", *tries, v, tc.tries)
			}
			if diff := cmp.Diff(tc.waits, c.waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJitter checks the spread of each kind over many draws.
func TestJitter(t *testing.T) {
	t.Parallel()
	const d = 100 * time.Millisecond
	for _, tc := range []struct {
		jitter backoff.Jitter
		first  [2]time.Duration // bounds of the first wait
		second [2]time.Duration // and of the second, from 2d
	}{
		{backoff.Exact, [2]time.Duration{d, d}, [2]time.Duration{2 * d, 2 * d}},
		{backoff.UpperHalf, [2]time.Duration{d / 2, d}, [2]time.Duration{d, 2 * d}},
		{backoff.HalfAgain, [2]time.Duration{d, d}, [2]time.Duration{2 * d, 3 * d}},
	} {
		t.Run(fmt.Sprint(tc.jitter), func(t *testing.T) {
			t.Parallel()
			spread := map[time.Duration]bool{}
			for range 200 {
				c := &clock{}
				p := backoff.Policy{Tries: 3, First: d, Growth: 2, Budget: backoff.Unbounded, Jitter: tc.jitter, Sleep: c.sleep}
				op, _ := script(repeat(2, backoff.Again(errBusy))...)
				if _, err := backoff.Do(context.Background(), p, op); err != nil {
					t.Fatal(err)
				}
				w := c.waits()
				for i, b := range [][2]time.Duration{tc.first, tc.second} {
					if w[i] < b[0] || w[i] > b[1] {
						t.Fatalf("wait %d is %v, want %v to %v", i+1, w[i], b[0], b[1])
					}
				}
				spread[w[1]] = true
			}
			if tc.jitter != backoff.Exact && len(spread) < 10 {
				t.Errorf("200 draws gave %d distinct waits: not spread", len(spread))
			}
		})
	}
}
