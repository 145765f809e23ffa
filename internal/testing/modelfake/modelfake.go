// Package modelfake is a scripted model server for tests that drive the real
// agent CLIs: an httptest server on 127.0.0.1 that speaks each CLI's own wire
// protocol — Anthropic Messages (Claude Code), OpenAI Responses (Codex),
// Gemini generateContent and streamGenerateContent (Gemini CLI) and OpenAI
// Chat Completions (opencode's openai-compatible provider), streamed as
// server-sent events where the CLI asks for them.
//
// For a client that is not a CLI (the openai provider), Replies starts a
// server that answers with replies a test wrote, in order, verbatim.
//
// It plays a Script: the main conversation's n-th request (n = the tool
// results the CLI has sent back so far) gets the script's n-th step, a call
// of one of the CLI's own tools or a final text; requests that offer no tools
// (a title, a model router's classification) get a side answer. Every answer
// reports the usage the server chose for it, and the server records what it
// served, so that a test can hold a CLI's own token report to it.
//
// It owns nothing of the product and must never be imported by code that
// ships: its answers are made by hand.
package modelfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Step is one turn of the model in the main conversation: a call of Tool
// with Input (arguments as a JSON object, or for a freeform tool the raw
// text in Raw), or, when Tool is "", a final Text.
type Step struct {
	Tool  string
	Input map[string]any
	Raw   string
	Text  string
}

// Failure makes the server answer with an error, Status with Message in
// the protocol's error body: from the main conversation's step At on, and
// when At is 0 (a wrong key, say) every request, side requests too.
type Failure struct {
	At      int
	Status  int
	Message string
}

// Script is what the server plays.
type Script struct {
	Steps []Step
	// Side is the text of side answers; "" is "Fix the seeded bug".
	Side string
	// Fail, when set, fails the main conversation from a step on.
	Fail *Failure
}

// Served is one request as the server answered it.
type Served struct {
	Protocol string // anthropic, responses, gemini, chat
	Path     string
	Model    string
	Side     bool // no tools offered: a side request
	Step     int  // the main conversation's step, -1 for side requests
	Status   int
	// Input and Output are the tokens the answer reported: Input counts
	// every prompt token (cached ones too), Output every generated one.
	Input, Output int64
}

// Request is a request as the server received it.
type Request struct {
	Path   string
	Header http.Header
	Raw    []byte
	Body   map[string]any // Raw decoded
}

// Server is the fake model endpoint.
type Server struct {
	URL string

	script   Script
	replying bool // answer with replies, not the script
	mu       sync.Mutex
	replies  []Reply
	served   []Served
	requests []Request
	// Otherwise answers when Replies has no reply left; nil answers 500.
	Otherwise func(Request) Reply
}

// New starts a server playing script; it stops when the test ends.
func New(t testing.TB, script Script) *Server {
	return start(t, &Server{script: script})
}

// Replies starts a server that answers every request with replies, in
// order, then with Otherwise; it stops when the test ends.
func Replies(t testing.TB, replies ...Reply) *Server {
	return start(t, &Server{replying: true, replies: replies})
}

func start(t testing.TB, s *Server) *Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// BaseURL is what an OpenAI client's base URL is set to.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Served returns what the server answered so far, in order.
func (s *Server) Served() []Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Served(nil), s.served...)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Bodies returns the request bodies received so far, in order.
func (s *Server) Bodies() [][]byte {
	var out [][]byte
	for _, r := range s.Requests() {
		out = append(out, r.Raw)
	}
	return out
}

// Total sums the tokens of the successful answers; with main, only those
// of the main conversation.
func (s *Server) Total(mainOnly bool) (in, out int64) {
	for _, r := range s.Served() {
		if r.Status == http.StatusOK && !(mainOnly && r.Side) {
			in, out = in+r.Input, out+r.Output
		}
	}
	return in, out
}

// turn is what a protocol handler decoded from a request.
type turn struct {
	model  string
	tools  bool // the request offers tools
	step   int  // tool results already in the conversation
	stream bool
	json   bool // a side request that wants a JSON answer
}

// answer is what the server decided to say to a turn.
type answer struct {
	step   Step
	side   bool
	fail   *Failure
	in     int64 // prompt tokens reported
	cached int64 // of which read from the cache
	out    int64
}

// protocol is one wire protocol: how to read a request, and how to write
// an answer or an error.
type protocol interface {
	name() string
	decode(path string, body []byte) (turn, error)
	write(w http.ResponseWriter, t turn, a answer)
	fail(w http.ResponseWriter, status int, message string)
}

func (s *Server) protocolFor(path string) protocol {
	switch {
	case strings.HasSuffix(path, "/messages"):
		return anthropic{}
	case strings.HasSuffix(path, "/responses"):
		return responses{}
	case strings.Contains(path, ":generateContent") || strings.Contains(path, ":streamGenerateContent"):
		return gemini{}
	case strings.HasSuffix(path, "/chat/completions"):
		return chat{}
	}
	return nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	p := s.protocolFor(r.URL.Path)
	if r.Method != http.MethodPost || p == nil {
		http.Error(w, "modelfake: unknown endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	req := Request{Path: r.URL.Path, Header: r.Header.Clone(), Raw: body}
	_ = json.Unmarshal(body, &req.Body)
	if s.replying {
		s.reply(req).write(w)
		return
	}
	t, err := p.decode(r.URL.Path, body)
	if err != nil {
		p.fail(w, http.StatusBadRequest, "modelfake: "+err.Error())
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	a := s.decide(t, len(s.served))
	rec := Served{Protocol: p.name(), Path: r.URL.Path, Model: t.model, Side: a.side, Step: t.step, Status: http.StatusOK}
	if a.side {
		rec.Step = -1
	}
	if a.fail != nil {
		rec.Status = a.fail.Status
	} else {
		rec.Input, rec.Output = a.in, a.out
	}
	s.served = append(s.served, rec)
	s.mu.Unlock()
	if a.fail != nil {
		if a.fail.Status == http.StatusTooManyRequests || a.fail.Status >= 500 {
			// As busy servers do: a client that retries need not wait long.
			w.Header().Set("Retry-After-Ms", "50")
			w.Header().Set("Retry-After", "0")
		}
		p.fail(w, a.fail.Status, a.fail.Message)
		return
	}
	p.write(w, t, a)
}

// reply records req and picks its scripted reply.
func (s *Server) reply(req Request) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	switch {
	case len(s.replies) > 0:
		r := s.replies[0]
		s.replies = s.replies[1:]
		return r
	case s.Otherwise != nil:
		return s.Otherwise(req)
	}
	return Error(http.StatusInternalServerError, fmt.Sprintf("modelfake: no reply scripted for request %d", len(s.requests)), nil)
}

// decide picks the answer to the n-th request (0-based), t. Usage differs
// from request to request, so that a report counting one twice, or
// missing one, shows.
func (s *Server) decide(t turn, n int) answer {
	a := answer{in: int64(1000 + 100*n), cached: int64(10 * n), out: int64(20 + 3*n)}
	if f := s.script.Fail; f != nil && f.At == 0 {
		a.fail, a.side = f, !t.tools
		return a
	}
	if !t.tools {
		a.side = true
		a.step = Step{Text: s.side(t)}
		return a
	}
	if f := s.script.Fail; f != nil && t.step >= f.At {
		a.fail = f
		return a
	}
	if t.step < len(s.script.Steps) {
		a.step = s.script.Steps[t.step]
	} else {
		a.step = Step{Text: "Done."}
	}
	return a
}

// side is the text of a side answer to t.
func (s *Server) side(t turn) string {
	if t.json {
		return `{"complexity_reasoning":"a one-line fix","complexity_score":5}`
	}
	if s.script.Side != "" {
		return s.script.Side
	}
	return "Fix the seeded bug"
}

// arguments is a step's input as a JSON text.
func (st Step) arguments() string {
	if st.Input == nil {
		return "{}"
	}
	return mustJSON(st.Input)
}

// mustJSON is v as JSON; the fake's own values always encode.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modelfake: %v", err))
	}
	return string(b)
}

// sse writes one server-sent event; event may be "".
func sse(w io.Writer, event string, data any) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", mustJSON(data))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeJSON writes v as a JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	Reply{Status: status, Body: mustJSON(v)}.write(w)
}

// startSSE starts an event stream.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}
