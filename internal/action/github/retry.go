package github

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryPolicy bounds how often and how long one request is retried.
type retryPolicy struct {
	attempts int           // tries in all
	maxWait  time.Duration // total time spent waiting between tries
	backoff  time.Duration // first wait for a 5xx; doubles each time
	wait     func(ctx context.Context, d time.Duration) error
}

func defaultRetry() retryPolicy {
	return retryPolicy{attempts: 4, maxWait: 2 * time.Minute, backoff: time.Second, wait: sleep}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retrier retries, below go-github, the answers GitHub asks to be retried:
// a 403 secondary rate limit, a 429, and a 5xx. Doing it at the transport
// keeps go-github from seeing the intermediate 403s: it would otherwise
// remember the secondary limit and refuse every request until Retry-After
// had passed in real time, whatever the wait we chose. Any other answer,
// and the last one when the tries or the wait budget run out, is passed up
// for go-github to turn into its usual error.
type retrier struct {
	next   http.RoundTripper
	policy retryPolicy
}

func (t *retrier) RoundTrip(req *http.Request) (*http.Response, error) {
	var waited time.Duration
	for try := 1; ; try++ {
		attempt, err := rewind(req, try)
		if err != nil {
			return nil, err
		}
		resp, err := t.next.RoundTrip(attempt)
		if err != nil {
			return nil, err
		}
		d, again := t.policy.delay(resp, try)
		if !again || try >= t.policy.attempts || waited+d > t.policy.maxWait ||
			(req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err := t.policy.wait(req.Context(), d); err != nil {
			return nil, err
		}
		waited += d
	}
}

// rewind is the request for try: the original first, then clones with a
// fresh body, since the transport consumed the last one.
func rewind(req *http.Request, try int) (*http.Request, error) {
	if try == 1 || req.GetBody == nil {
		return req, nil
	}
	clone := req.Clone(req.Context())
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	clone.Body = body
	return clone, nil
}

// delay says whether resp is worth another try and how long to wait first.
func (p retryPolicy) delay(resp *http.Response, try int) (time.Duration, bool) {
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		return waitFor(resp, p.backoffFor(try)), true
	case code == http.StatusForbidden && secondaryLimit(resp):
		return waitFor(resp, time.Minute), true // GitHub: wait at least a minute when it does not say
	case code >= 500:
		return waitFor(resp, p.backoffFor(try)), true
	}
	return 0, false
}

// backoffFor is the wait after try when GitHub does not name one: 1s, 2s, 4s…
func (p retryPolicy) backoffFor(try int) time.Duration {
	return p.backoff << min(try-1, 10)
}

// waitFor is what GitHub asks for: Retry-After (seconds or an HTTP date),
// else the rate limit reset when none remain, else def.
func waitFor(resp *http.Response, def time.Duration) time.Duration {
	if v := strings.TrimSpace(resp.Header.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(0, time.Until(t))
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(0, time.Until(time.Unix(n, 0)))
		}
	}
	return def
}

// secondaryLimit says whether a 403 is a secondary rate limit, by the rule
// go-github uses (documentation_url ending "secondary-rate-limits" or
// "#abuse-rate-limits") or GitHub's wording. It reads the body and puts it
// back for go-github.
func secondaryLimit(resp *http.Response) bool {
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		return false // the primary limit: resets within the hour, not worth waiting for here
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return false
	}
	var body struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	_ = json.Unmarshal(data, &body)
	return strings.HasSuffix(body.DocumentationURL, "secondary-rate-limits") ||
		strings.HasSuffix(body.DocumentationURL, "#abuse-rate-limits") ||
		strings.Contains(strings.ToLower(body.Message), "secondary rate limit")
}
