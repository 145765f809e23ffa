package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// retrier retries, below go-github, the answers GitHub asks to be retried:
// a 403 secondary rate limit, a 429, and a 5xx, waiting what GitHub asks
// or 1s, 2s, 4s… (at most 1024s). Doing it at the transport keeps
// go-github from seeing the intermediate 403s: it would otherwise remember
// the secondary limit and refuse every request until Retry-After had
// passed in real time, whatever the wait we chose. Any other answer, and
// the last one when the tries run out or the next wait would pass the
// budget, is passed up whole for go-github to turn into its usual error.
// retryablehttp runs the loop; it logs nothing, having no Logger.
type retrier struct {
	next   http.RoundTripper
	tries  int           // tries of one request in all
	budget time.Duration // the most waited in all for one request
	// wait replaces the wait between tries (a test records d and returns
	// at once); nil waits on retryablehttp's timer, which the request's
	// context ends early.
	wait func(d time.Duration)
}

func (t *retrier) RoundTrip(req *http.Request) (*http.Response, error) {
	tries, next, waited := 0, time.Duration(0), time.Duration(0)
	c := &retryablehttp.Client{
		// Redirects go up to the caller's client, as from any transport.
		HTTPClient: &http.Client{Transport: t.next, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		RetryMax:     t.tries - 1,
		ErrorHandler: retryablehttp.PassthroughErrorHandler, // the last answer, body and all
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if err != nil || ctx.Err() != nil {
				return false, err // no answer: not ours to retry
			}
			d, ok := again(resp, tries)
			tries++
			if !ok || waited+d > t.budget {
				return false, nil
			}
			next = d
			return true, nil
		},
		Backoff: func(time.Duration, time.Duration, int, *http.Response) time.Duration {
			waited += next
			if t.wait == nil {
				return next
			}
			t.wait(next)
			return 0
		},
	}
	r, err := retryablehttp.FromRequest(req) // holds the body, to send it again
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(r)
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // the inner client's wrapping: the caller's client adds its own
	}
	return resp, err
}

// again says whether resp is worth another try, and after how long: what
// GitHub asks, else a minute for a secondary limit (GitHub's advice) and
// 1s, 2s, 4s… after the try-th failure for the others.
func again(resp *http.Response, try int) (time.Duration, bool) {
	wait := time.Second << min(try, 10)
	switch code := resp.StatusCode; {
	case code == http.StatusForbidden && secondaryLimit(resp):
		wait = time.Minute
	case code != http.StatusTooManyRequests && code < 500:
		return 0, false
	}
	if d, ok := asked(resp); ok {
		return d, true
	}
	return wait, true
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

// secondaryLimit says whether a 403 is a secondary rate limit, by the rule
// go-github uses (documentation_url ending "secondary-rate-limits" or
// "#abuse-rate-limits") or GitHub's wording. It reads the body (at most
// 1 MiB) and puts it back for go-github.
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
