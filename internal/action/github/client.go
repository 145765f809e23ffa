// Package github is loop-action's client for GitHub's REST API: the pull
// request under review, who may command the loop, the sticky report
// comment, replies and reactions to commands, the commit status that
// gates merging, and the pull request that carries delivered work. It wraps go-github, retries what GitHub asks to be
// retried, and names the operation in every error.
//
// It decides nothing: what to post and whom to obey is package action's
// business. It never puts the token in an error, a log line or a URL.
package github

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// DefaultAPIURL is github.com's API root.
const DefaultAPIURL = "https://api.github.com/"

// Client talks to one GitHub API root with one token.
type Client struct {
	gh *gh.Client
}

// Option adjusts a Client.
type Option func(*options)

type options struct {
	httpClient *http.Client
	userAgent  string
	retry      retrier
}

// WithHTTPClient sends requests through hc's transport (default: a clone of
// http.DefaultTransport that gives up on a server silent for a minute).
// Retries and the token are layered on top of it.
func WithHTTPClient(hc *http.Client) Option { return func(o *options) { o.httpClient = hc } }

// WithUserAgent sets the User-Agent header (default "loop-action").
func WithUserAgent(ua string) Option { return func(o *options) { o.userAgent = ua } }

// WithRetry bounds retries: at most attempts tries of one request (1 means
// never retry) and at most maxWait spent waiting between them. A wait that
// would go past maxWait is not begun; the last answer is returned instead.
func WithRetry(attempts int, maxWait time.Duration) Option {
	return func(o *options) {
		o.retry.tries = max(1, attempts)
		o.retry.budget = maxWait
	}
}

// WithWait replaces how the client waits before a retry. Tests pass a
// function that records d and returns at once; the default sleeps for d or
// until the request's context is done.
func WithWait(wait func(d time.Duration)) Option {
	return func(o *options) { o.retry.wait = wait }
}

// New makes a client for the API root apiURL ("" means github.com) acting
// with token. apiURL is what GITHUB_API_URL holds: "https://api.github.com",
// "https://HOST/api/v3" on GitHub Enterprise Server, "https://api.SUB.ghe.com"
// on GHE.com. An https root that is a bare GHES host gets "api/v3/" appended,
// as go-github's WithEnterpriseURLs does; a plain-http root (a test server)
// is used as given.
func New(apiURL, token string, opts ...Option) (*Client, error) {
	if token == "" {
		return nil, errors.New("github client: no token")
	}
	base, err := baseURL(apiURL)
	if err != nil {
		return nil, err
	}
	// Four tries of a request, and never more than two minutes waited.
	o := options{userAgent: "loop-action", retry: retrier{tries: 4, budget: 2 * time.Minute}}
	for _, opt := range opts {
		opt(&o)
	}
	o.retry.next = transport(o.httpClient)
	hc := &http.Client{Transport: &o.retry}
	if o.httpClient != nil {
		hc.Timeout, hc.Jar, hc.CheckRedirect = o.httpClient.Timeout, o.httpClient.Jar, o.httpClient.CheckRedirect
	}
	c := gh.NewClient(hc).WithAuthToken(token)
	c.BaseURL = base
	c.UserAgent = o.userAgent
	return &Client{gh: c}, nil
}

func transport(hc *http.Client) http.RoundTripper {
	if hc != nil && hc.Transport != nil {
		return hc.Transport
	}
	if hc != nil {
		return http.DefaultTransport
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	return t
}

// baseURL is the API root with the trailing slash go-github requires.
func baseURL(apiURL string) (*url.URL, error) {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("github client: API URL %q is not an http(s) URL", apiURL)
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	if u.Scheme == "https" && !strings.HasSuffix(u.Path, "/api/v3/") &&
		!strings.HasPrefix(u.Host, "api.") && !strings.Contains(u.Host, ".api.") {
		u.Path += "api/v3/"
	}
	return u, nil
}

// ErrBodyTooLong marks a comment GitHub refused for its length (65,536
// characters); the caller should cut the body and try again.
var ErrBodyTooLong = errors.New("comment body is over GitHub's limit of 65536 characters")

// status is the HTTP status of a call GitHub refused with an error
// answer (not a rate limit), or 0.
func status(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// tooLong says whether err is GitHub refusing a comment body for its length.
func tooLong(err error) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	for _, e := range er.Errors {
		if e.Field == "body" && strings.Contains(strings.ToLower(e.Message), "too long") {
			return true
		}
	}
	return strings.Contains(strings.ToLower(er.Message), "too long")
}

// fail names the operation in err, and marks a too-long body.
func fail(op string, err error) error {
	if tooLong(err) {
		return fmt.Errorf("%s: %w: %w", op, ErrBodyTooLong, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
