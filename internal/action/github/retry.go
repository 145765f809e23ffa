package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/backoff"
)

// defaultRetry is the client's backoff: four tries of a request, waiting
// 1s, 2s, 4s… (at most 1024s) unless GitHub names the wait, and never
// more than two minutes in all.
func defaultRetry() backoff.Policy {
	return backoff.Policy{Tries: 4, First: time.Second, Growth: 2, Cap: time.Second << 10, Budget: 2 * time.Minute}
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
	policy backoff.Policy
}

func (t *retrier) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.policy
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		p.Tries = 1 // the body cannot be sent again
	}
	try := 0
	resp, err := backoff.Do(req.Context(), p, func(context.Context) (*http.Response, error) {
		try++
		attempt, err := rewind(req, try)
		if err != nil {
			return nil, err
		}
		resp, err := t.next.RoundTrip(attempt)
		if err != nil {
			return nil, err
		}
		return resp, again(resp)
	})
	switch {
	case err == nil || errors.Is(err, backoff.ErrGaveUp):
		return resp, nil
	case resp != nil: // the context ended with an answer to retry in hand
		resp.Body.Close()
	}
	return nil, err
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

// again is nil when resp is not worth another try, else an error that
// says so and how long GitHub asks to wait. The body of such an answer is
// read into memory (up to 1 MiB), freeing the connection during the wait
// and keeping the body for go-github if it is the last answer.
func again(resp *http.Response) error {
	err := fmt.Errorf("github answered %s", resp.Status)
	switch code := resp.StatusCode; {
	case code == http.StatusForbidden && secondaryLimit(resp):
		if d, ok := asked(resp); ok {
			return backoff.After(d, err)
		}
		return backoff.After(time.Minute, err) // GitHub: wait at least a minute when it does not say
	case code != http.StatusTooManyRequests && code < 500:
		return nil
	}
	_, _ = buffer(resp) // a body cut short is still the answer
	if d, ok := asked(resp); ok {
		return backoff.After(d, err)
	}
	return backoff.Again(err)
}

// asked is the wait GitHub asks for, if it does: Retry-After (seconds or
// an HTTP date), else the rate limit's reset when none remain.
func asked(resp *http.Response) (time.Duration, bool) {
	if v := strings.TrimSpace(resp.Header.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(0, time.Until(t)), true
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(0, time.Until(time.Unix(n, 0))), true
		}
	}
	return 0, false
}

// buffer reads resp's body into memory, at most 1 MiB of it, closes the
// connection's and puts what it read back for go-github.
func buffer(resp *http.Response) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return data, err
}

// secondaryLimit says whether a 403 is a secondary rate limit, by the rule
// go-github uses (documentation_url ending "secondary-rate-limits" or
// "#abuse-rate-limits") or GitHub's wording. It reads the body and puts it
// back for go-github.
func secondaryLimit(resp *http.Response) bool {
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		return false // the primary limit: resets within the hour, not worth waiting for here
	}
	data, err := buffer(resp)
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
