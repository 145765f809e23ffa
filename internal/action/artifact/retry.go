package artifact

import (
	"context"
	"net/http"

	"github.com/loop-action/loop-action/internal/backoff"
)

// retry runs op under the toolkit's policy (Config.policy) until it
// succeeds, fails with again false, the context ends, or the tries run out
// ("gave up after 5 attempts: …").
func retry(ctx context.Context, p backoff.Policy, op func() (again bool, err error)) error {
	_, err := backoff.Do(ctx, p, func(context.Context) (struct{}, error) {
		again, err := op()
		if again {
			return struct{}{}, backoff.Again(err)
		}
		return struct{}{}, err
	})
	return err
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
