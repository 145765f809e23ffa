package artifact_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/action/artifact"
	"github.com/loop-action/loop-action/internal/testing/artifactfake"
)

func TestUploadRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind     artifactfake.Kind
		statuses []int
	}{
		{artifactfake.Create, []int{429}},
		{artifactfake.Create, []int{503}},
		{artifactfake.Create, []int{429, 500, 502, 504}},
		{artifactfake.Block, []int{429}},
		{artifactfake.Block, []int{503}},
		{artifactfake.BlockList, []int{503}},
		{artifactfake.Finalize, []int{429}},
		{artifactfake.Finalize, []int{503}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.kind, tt.statuses), func(t *testing.T) {
			t.Parallel()
			srv, cfg := setup(t)
			for _, s := range tt.statuses {
				srv.FailNext(tt.kind, s)
			}
			if _, err := artifact.Upload(t.Context(), cfg, name, smallDir(t)); err != nil {
				t.Fatal(err)
			}
			if got, want := srv.Calls(tt.kind), 1+len(tt.statuses); got != want {
				t.Errorf("%d %s calls, want %d", got, tt.kind, want)
			}
			if _, ok := srv.Artifact(name); !ok {
				t.Error("no finalized artifact")
			}
		})
	}
}

func TestUploadFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		artifact  string // "" for the usual name
		fail      func(*artifactfake.Server, *artifact.Config)
		kind      artifactfake.Kind
		wantCalls int
		wantIs    error
		wantErr   string
	}{
		{
			name: "gives up after 5 attempts",
			fail: func(s *artifactfake.Server, _ *artifact.Config) {
				for range 5 {
					s.FailNext(artifactfake.Block, 503)
				}
			},
			kind: artifactfake.Block, wantCalls: 5, wantErr: "gave up after 5 attempts",
		},
		{
			name: "insufficient usage is final",
			fail: func(s *artifactfake.Server, _ *artifact.Config) {
				s.FailNextWith(artifactfake.Create, 429, "insufficient usage to create artifact")
			},
			kind: artifactfake.Create, wantCalls: 1, wantIs: artifact.ErrUsage,
		},
		{
			name: "400 is final",
			fail: func(s *artifactfake.Server, _ *artifact.Config) { s.FailNext(artifactfake.Finalize, 400) },
			kind: artifactfake.Finalize, wantCalls: 1, wantErr: "400 Bad Request invalid_argument",
		},
		{
			name: "a token this server did not issue gets 401",
			fail: func(_ *artifactfake.Server, c *artifact.Config) {
				other := artifactfake.New()
				defer other.Close()
				c.RuntimeToken = other.Token(runID, jobID)
			},
			kind: artifactfake.Create, wantCalls: 1, wantErr: "401 Unauthorized unauthenticated",
		},
		{
			name: "a message quoting the token is redacted",
			fail: func(s *artifactfake.Server, c *artifact.Config) {
				s.FailNextWith(artifactfake.Create, 400, "bad token "+c.RuntimeToken)
			},
			kind: artifactfake.Create, wantCalls: 1, wantErr: "bad token ***",
		},
		{
			name: "an invalid name is refused before any call", artifact: "bad/name",
			fail: func(*artifactfake.Server, *artifact.Config) {},
			kind: artifactfake.Create, wantCalls: 0, wantErr: `artifact name "bad/name" contains "/"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, cfg := setup(t)
			tt.fail(srv, &cfg)
			_, err := artifact.Upload(t.Context(), cfg, cmp.Or(tt.artifact, name), smallDir(t))
			checkErr(t, err, cfg.RuntimeToken, tt.wantIs, tt.wantErr)
			if got := srv.Calls(tt.kind); got != tt.wantCalls {
				t.Errorf("%d %s calls, want %d", got, tt.kind, tt.wantCalls)
			}
		})
	}
}

// checkErr checks that err is wantIs and says wantErr, without the token.
func checkErr(t *testing.T, err error, token string, wantIs error, wantErr string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatal("upload succeeded")
	case wantIs != nil && !errors.Is(err, wantIs):
		t.Errorf("error %q is not %q", err, wantIs)
	case !strings.Contains(err.Error(), wantErr):
		t.Errorf("error %q does not say %q", err, wantErr)
	case token != "" && strings.Contains(err.Error(), token):
		t.Errorf("error %q quotes the token", err)
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestUploadNetworkErrors(t *testing.T) {
	t.Parallel()
	for _, failing := range []string{http.MethodPost, http.MethodPut} {
		t.Run(failing, func(t *testing.T) {
			t.Parallel()
			_, cfg := setup(t)
			calls := 0
			cfg.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.Method != failing {
					return http.DefaultTransport.RoundTrip(r)
				}
				calls++
				return nil, errors.New("connection reset by peer")
			})}
			_, err := artifact.Upload(t.Context(), cfg, name, smallDir(t))
			checkErr(t, err, cfg.RuntimeToken, nil, "gave up after 5 attempts")
			if strings.Contains(err.Error(), "sig=") {
				t.Errorf("error %q quotes the signed URL's signature", err)
			}
			if calls != 5 {
				t.Errorf("%d attempts, want 5", calls)
			}
		})
	}
}

func TestUploadStopsWithContext(t *testing.T) {
	t.Parallel()
	srv, cfg := setup(t)
	cfg.Backoff = time.Hour
	srv.FailNext(artifactfake.Create, 503)
	// The context ends as the 503's body is closed: Upload must not retry
	// (it would wait an hour) and names the answer it stopped on. No clock
	// decides what the test sees; backoff's own tests cover a context that
	// ends during the wait.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg.HTTPClient = &http.Client{Transport: cancelOnClose{http.DefaultTransport, cancel}}
	_, err := artifact.Upload(ctx, cfg, name, smallDir(t))
	checkErr(t, err, cfg.RuntimeToken, nil, "503 Service Unavailable")
	if n := srv.Calls(artifactfake.Create); n != 1 {
		t.Errorf("CreateArtifact asked %d times after the context ended, want 1", n)
	}
}

// cancelOnClose calls cancel when the first answer's body is closed.
type cancelOnClose struct {
	rt     http.RoundTripper
	cancel context.CancelFunc
}

func (c cancelOnClose) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err == nil {
		resp.Body = closeHook{resp.Body, c.cancel}
	}
	return resp, err
}

type closeHook struct {
	io.ReadCloser
	done func()
}

func (c closeHook) Close() error {
	defer c.done()
	return c.ReadCloser.Close()
}
