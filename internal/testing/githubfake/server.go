// Package githubfake is a stateful stand-in for the slice of GitHub's REST
// API that loop-action uses: pull requests (read, listed by head, opened
// and edited), issue comments and their reactions, collaborator
// permissions and commit statuses. It answers with
// the JSON GitHub sends (enough for go-github to decode), paginates the way
// GitHub does (per_page, page and a Link header), checks tokens, and injects
// one-shot faults (rate limits, 404, 422, 5xx) on request.
//
// It is a test double and nothing more: it keeps its state in memory, trusts
// only the tokens registered with SetToken, and never talks to GitHub.
package githubfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"time"
)

// SecondaryRateLimitBody is the body GitHub sends with a 403 when a
// secondary rate limit is hit; go-github recognises it by the
// documentation_url suffix "secondary-rate-limits".
const SecondaryRateLimitBody = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`

// Server is a fake GitHub REST API. Its zero value is not usable; call New.
type Server struct {
	srv *httptest.Server

	mu     sync.Mutex
	tokens map[string]string     // token → login
	users  map[string]*userRec   // lower login → user
	repos  map[string]*repoState // lower "owner/repo" → repo
	faults []fault
	log    []string
	clock  func() time.Time
	nextID int64 // comment, reaction and status ids
}

type fault struct {
	method, pattern string
	status          int
	headers         map[string]string
	body            string
	every           bool // FailEvery's: never used up
}

// New starts a fake on a loopback port. Close it when done.
func New() *Server {
	s := &Server{
		tokens: map[string]string{},
		users:  map[string]*userRec{},
		repos:  map[string]*repoState{},
		clock:  time.Now,
		nextID: 3_000_000_000, // above 2^31, so ids must be int64 end to end
	}
	s.srv = httptest.NewServer(s)
	return s
}

// URL is the API root, e.g. "http://127.0.0.1:41234" (no trailing slash).
func (s *Server) URL() string { return s.srv.URL }

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// SetClock replaces the clock that stamps comments, reactions and statuses
// (time.Now by default). Times are kept in UTC to the second, as GitHub
// shows them.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// SetToken makes token valid; requests bearing it act as user. A login
// ending in "[bot]" is a Bot, any other a User.
func (s *Server) SetToken(token, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = user
	s.user(user, "")
}

// FailNext makes the next request whose method and path match answer with
// status, headers and body instead, once. method "" or "*" matches any
// method; pathPattern is a path.Match pattern on the URL path without the
// query ("/repos/o/r/issues/comments/*"). An empty body gets GitHub's usual
// body for the status (for 403, SecondaryRateLimitBody). Faults queue: each
// call adds one, and the oldest matching one is used first. Requests with a
// bad token are refused before faults are considered.
func (s *Server) FailNext(method, pathPattern string, status int, headers map[string]string, body string) {
	s.fail(fault{method, pathPattern, status, headers, body, false})
}

// FailEvery makes every request whose method and path match (as in
// FailNext) answer status with GitHub's usual body, from now on: an API
// that is down, or a token refused one kind of call.
func (s *Server) FailEvery(method, pathPattern string, status int) {
	s.fail(fault{method, pathPattern, status, nil, "", true})
}

func (s *Server) fail(f fault) {
	if _, err := path.Match(f.pattern, "/"); err != nil {
		panic(fmt.Sprintf("githubfake: fault pattern %q: %v", f.pattern, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// Requests is the log of requests served so far, as "METHOD path" with the
// query appended when there is one ("GET /repos/o/r/issues/1/comments?page=2&per_page=100").
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// ServeHTTP answers one API request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, r.Method+" "+r.URL.RequestURI())
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	login, ok := s.authenticate(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
		return
	}
	if s.injectFault(w, r) {
		return
	}
	for _, rt := range routes {
		if p, ok := rt.match(r.Method, r.URL.Path); ok {
			rt.handle(s, &call{w: w, r: r, p: p, login: login})
			return
		}
	}
	notFound(w)
}

func (s *Server) authenticate(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !(strings.EqualFold(scheme, "token") || strings.EqualFold(scheme, "bearer")) {
		return "", false
	}
	login, ok := s.tokens[strings.TrimSpace(token)]
	return login, ok
}

func (s *Server) injectFault(w http.ResponseWriter, r *http.Request) bool {
	for i, f := range s.faults {
		if f.method != "" && f.method != "*" && !strings.EqualFold(f.method, r.Method) {
			continue
		}
		if ok, _ := path.Match(f.pattern, r.URL.Path); !ok {
			continue
		}
		if !f.every {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
		for k, v := range f.headers {
			w.Header().Set(k, v)
		}
		body := cmp.Or(f.body, defaultBody(f.status))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(body))
		return true
	}
	return false
}

func defaultBody(status int) string {
	switch status {
	case http.StatusForbidden:
		return SecondaryRateLimitBody
	case http.StatusTooManyRequests:
		return `{"message":"API rate limit exceeded","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`
	case http.StatusUnprocessableEntity:
		return `{"message":"Validation Failed","errors":[],"documentation_url":"https://docs.github.com/rest"}`
	}
	b, _ := json.Marshal(errorBody{Message: http.StatusText(status), DocumentationURL: "https://docs.github.com/rest", Status: fmt.Sprint(status)})
	return string(b)
}

// now is the clock's time in UTC, to the second. Callers hold s.mu.
func (s *Server) now() time.Time { return s.clock().UTC().Truncate(time.Second) }

// id hands out the next id. Callers hold s.mu.
func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}
