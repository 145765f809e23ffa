// Package artifactfake owns a stand-in for the GitHub Actions results
// service and the blob storage behind it, for tests: artifact protocol v4
// over twirp, and Azure-style block uploads to a signed URL on the same
// server. It behaves like GitHub's service and like act's: it answers
// snake_case (camelCase on request), takes only block uploads, checks the
// size and SHA-256 at finalize, and refuses a second artifact with the same
// name in a run. Faults can be injected per call kind.
//
// It must never be used outside tests, and never be lenient where GitHub or
// act would refuse: a client that passes here must work against both. Where
// it is stricter than GitHub (a size that is not a JSON string, unknown
// request fields, a missing hash, an Authorization header on the blob) the
// handler says so.
package artifactfake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// Kind names a kind of call, for fault injection and counting.
type Kind string

// Kinds of call.
const (
	Create    Kind = "create"    // CreateArtifact
	Block     Kind = "block"     // Put Block
	BlockList Kind = "blocklist" // Put Block List
	Finalize  Kind = "finalize"  // FinalizeArtifact
)

// Option changes how a Server behaves.
type Option func(*Server)

// CamelCase makes the server answer in camelCase, as act does
// (signedUploadUrl, artifactId), instead of GitHub's snake_case.
func CamelCase() Option { return func(s *Server) { s.camel = true } }

// Record is what the server knows of an artifact.
type Record struct {
	ID          int64 // 0 until finalized
	RunID       string
	JobID       string
	Name        string
	ExpiresAt   time.Time // zero when the request left expires_at out
	ContentType string    // x-ms-blob-content-type of the block list
	Size        int64     // as finalized
	Hash        string    // as finalized: "sha256:<hex>"
	Finalized   bool
}

// Server is a fake results service with its blob storage.
type Server struct {
	camel bool
	srv   *httptest.Server

	mu        sync.Mutex
	tokens    map[string]scope // tokens minted by Token
	faults    map[Kind][]fault
	calls     map[Kind]int
	artifacts []*artifact // in creation order
	nextID    int64
}

type scope struct{ run, job string }

type fault struct {
	status int
	msg    string
}

// New starts a server; Close stops it.
func New(opts ...Option) *Server {
	s := &Server{
		tokens: map[string]scope{},
		faults: map[Kind][]fault{},
		calls:  map[Kind]int{},
		nextID: 1000,
	}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s.routes())
	return s
}

// URL is the server's base URL, to use as ACTIONS_RESULTS_URL.
func (s *Server) URL() string { return s.srv.URL + "/" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+servicePath+"CreateArtifact", s.create)
	mux.HandleFunc("POST "+servicePath+"FinalizeArtifact", s.finalize)
	mux.HandleFunc("PUT /blobs/{key}", s.putBlob)
	return mux
}

// Token mints an unsigned JWT (alg none) whose scp is
// "Actions.ExampleScope Actions.Results:<runID>:<jobID>". The server
// accepts only tokens it minted.
func (s *Server) Token(runID, jobID string) string {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"scp": "Actions.ExampleScope Actions.Results:" + runID + ":" + jobID,
		"iss": "artifactfake",
		"jti": randomHex(8),
	})
	tok := enc.EncodeToString(header) + "." + enc.EncodeToString(claims) + "."
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[tok] = scope{run: runID, job: jobID}
	return tok
}

// FailNext makes the next call of kind fail with status. Faults queue up:
// each call takes the next one.
func (s *Server) FailNext(kind Kind, status int) {
	s.FailNextWith(kind, status, fmt.Sprintf("injected %d", status))
}

// FailNextWith is FailNext with the error message to send, such as
// GitHub's "insufficient usage to create artifact".
func (s *Server) FailNextWith(kind Kind, status int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[kind] = append(s.faults[kind], fault{status: status, msg: msg})
}

// Calls is how many calls of kind the server has had, failed ones included.
func (s *Server) Calls(kind Kind) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[kind]
}

// Artifact is the zip of the finalized artifact name (the latest, if
// several runs have one).
func (s *Server) Artifact(name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.latest(name)
	if a == nil || !a.Finalized {
		return nil, false
	}
	return slices.Clone(a.blob), true
}

// Record is what the server knows of the latest artifact called name,
// finalized or not.
func (s *Server) Record(name string) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.latest(name)
	if a == nil {
		return Record{}, false
	}
	return a.Record, true
}

func (s *Server) latest(name string) *artifact {
	for _, a := range slices.Backward(s.artifacts) {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// hit counts a call of kind and takes its next fault, if any.
func (s *Server) hit(kind Kind) (fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[kind]++
	q := s.faults[kind]
	if len(q) == 0 {
		return fault{}, false
	}
	s.faults[kind] = q[1:]
	return q[0], true
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
