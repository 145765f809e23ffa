// Package modelfake is a scripted model server for tests that drive the real
// agent CLIs: an httptest server on 127.0.0.1 that speaks each CLI's own wire
// protocol — Anthropic Messages (Claude Code), OpenAI Responses (Codex),
// Gemini generateContent and streamGenerateContent (Gemini CLI) and OpenAI
// Chat Completions (opencode's openai-compatible provider), streamed as
// server-sent events where the CLI asks for them.
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

// Server is the fake model endpoint.
type Server struct {
	URL string

	script Script
	mu     sync.Mutex
	served []Served
	bodies [][]byte
}

// New starts a server playing script; it stops when the test ends.
func New(t testing.TB, script Script) *Server {
	t.Helper()
	s := &Server{script: script}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Served returns what the server answered so far, in order.
func (s *Server) Served() []Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Served(nil), s.served...)
}

// Bodies returns the request bodies received so far, in order.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
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
	t, err := p.decode(r.URL.Path, body)
	if err != nil {
		p.fail(w, http.StatusBadRequest, "modelfake: "+err.Error())
		return
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
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
	b, err := json.Marshal(st.Input)
	if err != nil {
		panic(fmt.Sprintf("modelfake: step input: %v", err))
	}
	return string(b)
}

// sse writes one server-sent event; event may be "".
func sse(w io.Writer, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("modelfake: event: %v", err))
	}
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeJSON writes v as a JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// startSSE starts an event stream.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}
