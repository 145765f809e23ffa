package artifact

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// retry is the toolkit's policy: a few attempts, waiting first, then ×1.5
// with jitter between them.
type retry struct {
	attempts int
	first    time.Duration
}

// do runs op until it succeeds, fails with again false, the context ends,
// or it has run r.attempts times.
func (r retry) do(ctx context.Context, op func() (again bool, err error)) error {
	wait := r.first
	for attempt := 1; ; attempt++ {
		again, err := op()
		if err == nil || !again || ctx.Err() != nil {
			return err
		}
		if attempt >= r.attempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		if serr := sleep(ctx, jitter(wait, attempt)); serr != nil {
			return fmt.Errorf("%w while waiting to retry: %w", serr, err)
		}
		wait = wait * 3 / 2
	}
}

// jitter waits exactly wait after the first attempt, as the toolkit does,
// and up to half as long again after later ones.
func jitter(wait time.Duration, attempt int) time.Duration {
	if attempt == 1 {
		return wait
	}
	return wait + rand.N(wait/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryable reports whether a response status is worth another attempt.
func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
