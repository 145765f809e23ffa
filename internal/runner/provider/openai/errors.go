package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/loop-action/loop-action/internal/backoff"
)

// maxDetail bounds the server's message quoted in an error.
const maxDetail = 240

// retryable marks the failures worth another try: 429 and 5xx answers
// (after their Retry-After, when they give one) and requests that got no
// answer at all. Nothing is tried again once ctx has ended.
func retryable(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, errTooLarge) {
		return err
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return backoff.Again(err)
	}
	if apiErr.StatusCode != http.StatusTooManyRequests && apiErr.StatusCode < 500 {
		return err
	}
	if apiErr.Response != nil {
		if d, ok := RetryAfter(apiErr.Response.Header.Get("Retry-After"), time.Now()); ok {
			return backoff.After(d, err)
		}
	}
	return backoff.Again(err)
}

// RetryAfter reads a Retry-After header: delay-seconds or an HTTP-date
// (a date in the past is no wait). ok is false when there is none or it
// is neither.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 || s > int64(24*time.Hour/time.Second) {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(0, t.Sub(now)), true
}

// explain says why a request failed, naming the provider, and whether the
// failure is fatal: the same request can never succeed (a refused key, an
// unknown model or endpoint).
func (c Client) explain(err error) (fatal bool, _ error) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return false, fmt.Errorf("provider %q: no answer from %s: %w", c.Name, c.Spec.BaseURL, err)
	}
	code := apiErr.StatusCode
	status := fmt.Sprintf("%d %s", code, http.StatusText(code))
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		// The message of a refused key may quote part of it: not shown.
		return true, fmt.Errorf("provider %q: %s refused the API key in %s (%s); check that variable", c.Name, c.Spec.BaseURL, c.keyName(), status)
	case code == http.StatusNotFound:
		return true, fmt.Errorf("provider %q: %s has no model %q or no chat completions endpoint (%s)%s", c.Name, c.Spec.BaseURL, c.Spec.Model, status, detail(apiErr))
	case code == http.StatusTooManyRequests || code >= 500:
		return false, fmt.Errorf("provider %q: %s still answered %s after retrying%s", c.Name, c.Spec.BaseURL, status, detail(apiErr))
	}
	return false, fmt.Errorf("provider %q: %s answered %s%s", c.Name, c.Spec.BaseURL, status, detail(apiErr))
}

// keyName names the key's variable in an error.
func (c Client) keyName() string {
	if c.Spec.APIKeyEnv == "" {
		return "no variable (api_key_env is not set)"
	}
	return c.Spec.APIKeyEnv
}

// jsonModeRefused reports whether the endpoint refused the request for its
// response_format, the way endpoints without JSON mode do.
func jsonModeRefused(err error) bool {
	var apiErr *openai.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusBadRequest &&
		(apiErr.Param == "response_format" || strings.Contains(strings.ToLower(apiErr.Message), "response_format"))
}

// detail is the server's message, on one line and bounded.
func detail(e *openai.Error) string {
	if e.Message == "" {
		return ""
	}
	return ": " + oneLine(e.Message)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxDetail {
		s = s[:maxDetail] + "…"
	}
	return s
}
