// Package backoff owns how loop-action tries a failed operation again: how
// many tries, how long it waits between them and the most it waits in all.
// It is the backoff of the OpenAI client, the artifact upload and the
// state branch's push race; the GitHub client's transport retries through
// go-retryablehttp (internal/action/github/retry.go), whose RoundTripper
// and CheckRetry hooks fit an http.Client where this loop does not.
//
// It decides nothing about the operation: the caller marks the failures
// worth another try (Again, After). It never inspects an error or an
// answer, never retries an unmarked failure, and never retries once the
// context has ended.
//
// The loop is ours, some 40 lines: the libraries (go-retry, cenkalti's
// backoff) need an adapter larger than it to keep the waits a test can
// replace, the budget counted in waits rather than wall time, an asked-for
// wait in place of one step, and op's error beside ctx's.
package backoff

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"
)

// Unbounded is a Budget that never stops the retries.
const Unbounded time.Duration = math.MaxInt64

// ErrGaveUp is wrapped by the error of a Do that ran out of tries or of
// budget: "gave up after 5 attempts: <the last failure>".
var ErrGaveUp = errors.New("gave up")

// Policy says how often, and after how long, a failure is tried again.
type Policy struct {
	Tries  int           // tries in all; 1 or less never retries
	First  time.Duration // the wait after the first failed try
	Growth float64       // each wait is the one before times Growth (2 doubles); 1 or less keeps it
	Cap    time.Duration // the longest wait the growth reaches; 0 means no cap
	Budget time.Duration // the most waited in all: a wait that would pass it is not begun (0 allows none)
	Jitter Jitter        // how the waits are spread

	// Sleep replaces the wait between tries: a test passes one that
	// records d and returns at once. nil waits on a timer until ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Jitter spreads the waits of clients that failed together.
type Jitter int

const (
	// Exact waits are not spread.
	Exact Jitter = iota
	// UpperHalf makes a wait d one of d/2 to d.
	UpperHalf
	// HalfAgain keeps the first wait exact and makes a later wait d one of
	// d to 1.5d, as the GitHub Actions toolkit does.
	HalfAgain
)

// Again marks err as worth another try after the policy's wait.
func Again(err error) error {
	if err == nil {
		return nil
	}
	return &again{err: err}
}

// After marks err as worth another try after exactly d, the wait the
// other side asked for: it is not spread nor capped, but the budget still
// bounds it, and it takes the place of one step of the growth.
func After(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &again{err: err, after: max(0, d), exact: true}
}

// again is a failure worth another try.
type again struct {
	err   error
	after time.Duration
	exact bool
}

func (a *again) Error() string { return a.err.Error() }
func (a *again) Unwrap() error { return a.err }

// steps returns the policy's growing, capped and spread waits, one a call.
func (p Policy) steps() func() time.Duration {
	next, n := p.First, 0
	return func() time.Duration {
		d := next
		next = scale(next, p.Growth)
		if p.Cap > 0 {
			d = min(d, p.Cap)
		}
		n++
		return p.Jitter.spread(d, n)
	}
}

// scale is d times f, at most the longest duration.
func scale(d time.Duration, f float64) time.Duration {
	if f <= 1 {
		return d
	}
	if x := float64(d) * f; x < math.MaxInt64 {
		return time.Duration(x)
	}
	return math.MaxInt64
}

// spread applies the jitter to d, the policy's nth wait.
func (j Jitter) spread(d time.Duration, n int) time.Duration {
	switch {
	case d <= 0:
	case j == UpperHalf:
		d = d/2 + rand.N(d/2+1)
	case j == HalfAgain && n > 1:
		d = min(d, math.MaxInt64/3*2) // 1.5d must fit
		d += rand.N(d/2 + 1)
	}
	return d
}
