package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v62/github"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

type failure struct {
	status  int
	headers map[string]string
	body    string
}

var (
	secondary = failure{403, map[string]string{"Retry-After": "1"}, ""}
	tooMany   = failure{429, map[string]string{"Retry-After": "2"}, ""}
	plain403  = failure{403, nil, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`}
	e500      = failure{500, nil, ""}
)

func TestRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		failures []failure
		ok       bool
		waits    []time.Duration
	}{
		{"secondary rate limit honours Retry-After", []failure{secondary}, true, []time.Duration{time.Second}},
		{"429 honours Retry-After", []failure{tooMany}, true, []time.Duration{2 * time.Second}},
		{"429 without Retry-After backs off", []failure{{429, nil, ""}}, true, []time.Duration{time.Second}},
		{"5xx backs off", []failure{e500, {502, nil, ""}, {503, nil, ""}}, true, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{"mixed", []failure{secondary, tooMany, e500}, true, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{"four tries at most", []failure{e500, e500, e500, e500}, false, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{"secondary rate limit without Retry-After waits a minute", []failure{{403, nil, githubfake.SecondaryRateLimitBody}}, true, []time.Duration{time.Minute}},
		{"Retry-After as a date", []failure{{429, map[string]string{"Retry-After": "Mon, 02 Jan 2006 15:04:05 GMT"}, ""}}, true, []time.Duration{0}},
		{"a spent limit waits for its reset", []failure{{429, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"}, ""}}, true, []time.Duration{0}},
		{"the primary limit's 403 is not retried", []failure{{403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"}, githubfake.SecondaryRateLimitBody}}, false, nil},
		{"plain 403 is not retried", []failure{plain403}, false, nil},
		{"404 is not retried", []failure{{404, nil, ""}}, false, nil},
		{"422 is not retried", []failure{{422, nil, ""}}, false, nil},
		{"a wait past the budget is not begun", []failure{{429, map[string]string{"Retry-After": "3600"}, ""}}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, c, w := setup(t)
			for _, f := range tc.failures {
				srv.FailNext("POST", "/repos/o/r/issues/1/comments", f.status, f.headers, f.body)
			}
			id, err := c.Comment(context.Background(), "o", "r", 1, "hello")
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			noToken(t, err)
			if diff := cmp.Diff(tc.waits, w.got()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			tries := min(len(tc.failures)+1, 1+len(tc.waits))
			if n := count(srv, "POST"); n != tries {
				t.Errorf("%d tries, want %d", n, tries)
			}
			if tc.ok {
				if got := srv.Comments("o", "r", 1); len(got) != 1 || got[0].ID != id || got[0].Body != "hello" {
					t.Errorf("comments after retries: %+v (the body must be sent again whole)", got)
				}
			}
		})
	}
}

func TestRetryErrorsNameTheOperation(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	srv.FailNext("GET", "/repos/o/r/pulls/1", 403, nil, plain403.body)
	_, err := c.PullRequest(context.Background(), "o", "r", 1)
	if err == nil || !strings.HasPrefix(err.Error(), "get pull request o/r#1: ") || !strings.Contains(err.Error(), "Resource not accessible") {
		t.Errorf("plain 403: %v", err)
	}
	for range 4 {
		srv.FailNext("GET", "/repos/o/r/pulls/1", 403, map[string]string{"Retry-After": "1"}, "")
	}
	_, err = c.PullRequest(context.Background(), "o", "r", 1)
	var abuse *gh.AbuseRateLimitError
	if !errors.As(err, &abuse) || !strings.HasPrefix(err.Error(), "get pull request o/r#1: ") {
		t.Errorf("exhausted secondary limit: %v", err)
	}
}

func TestRetryDuringPagination(t *testing.T) {
	t.Parallel()
	srv, c, w := setup(t)
	chatter(srv, 150)
	srv.FailNext("GET", "/repos/o/r/issues/1/comments", 429, nil, "")
	srv.FailNext("GET", "/repos/o/r/issues/1/comments", 403, map[string]string{"Retry-After": "1"}, githubfake.SecondaryRateLimitBody)
	got, err := c.Comments(context.Background(), "o", "r", 1)
	if err != nil || len(got) != 150 {
		t.Fatalf("%d comments, %v", len(got), err)
	}
	if n := len(w.got()); n != 2 {
		t.Errorf("%d waits, want 2", n)
	}
}

func TestRetryWaitStopsWithContext(t *testing.T) {
	t.Parallel()
	srv := githubfake.New()
	t.Cleanup(srv.Close)
	srv.SetToken(token, bot)
	srv.AddPull("o", "r", githubfake.Pull{Number: 1})
	c, err := github.New(srv.URL(), token) // the real wait
	if err != nil {
		t.Fatal(err)
	}
	srv.FailNext("GET", "/repos/o/r/pulls/1", 429, map[string]string{"Retry-After": "60"}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.PullRequest(ctx, "o", "r", 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("waited %v past the context", d)
	}
}

func TestWithRetryOne(t *testing.T) {
	t.Parallel()
	srv, c, w := setup(t, github.WithRetry(1, time.Hour))
	srv.FailNext("GET", "/repos/o/r/pulls/1", 500, nil, "")
	if _, err := c.PullRequest(context.Background(), "o", "r", 1); err == nil || len(w.got()) != 0 {
		t.Errorf("err %v, waits %v: want one try", err, w.got())
	}
}

// TestRetryKeepsTheLastAnswer: when the tries run out, go-github gets the
// last answer whole, its message included, after the earlier ones were
// read and dropped before each wait.
func TestRetryKeepsTheLastAnswer(t *testing.T) {
	t.Parallel()
	srv, c, w := setup(t)
	for i := range 4 {
		srv.FailNext("GET", "/repos/o/r/pulls/1", 503, nil, fmt.Sprintf(`{"message":"unavailable, answer %d"}`, i+1))
	}
	_, err := c.PullRequest(context.Background(), "o", "r", 1)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "unavailable, answer 4") {
		t.Errorf("err = %v, want the fourth answer's 503 and message", err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, w.got()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRetryLeavesTransportToTheCaller: a request that got no answer is not
// retried, its error is wrapped once, and a redirect goes up to the
// caller's client and its redirect policy.
func TestRetryLeavesTransportToTheCaller(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	refused := errors.New("connection refused")
	fail := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		calls.Add(1)
		return nil, refused
	})}
	w := &waits{}
	c, err := github.New("http://127.0.0.1:1", token, github.WithHTTPClient(fail), github.WithWait(w.wait))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PullRequest(context.Background(), "o", "r", 1)
	if !errors.Is(err, refused) || calls.Load() != 1 || len(w.got()) != 0 || strings.Count(err.Error(), "127.0.0.1") != 1 {
		t.Errorf("err %v after %d calls, waits %v: want one try, its error wrapped once", err, calls.Load(), w.got())
	}

	noRedirects := errors.New("redirects refused")
	moved := &http.Client{
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"Location": {"http://127.0.0.1:1/elsewhere"}}
			return &http.Response{StatusCode: http.StatusFound, Header: h, Body: http.NoBody, Request: r}, nil
		}),
		CheckRedirect: func(*http.Request, []*http.Request) error { return noRedirects },
	}
	c, err = github.New("http://127.0.0.1:1", token, github.WithHTTPClient(moved))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PullRequest(context.Background(), "o", "r", 1); !errors.Is(err, noRedirects) {
		t.Errorf("err = %v, want the caller's redirect policy's", err)
	}
}
