// Package openaifake is an OpenAI-compatible Chat Completions endpoint for
// tests: an httptest server on 127.0.0.1 that records every request and
// answers with the replies a test scripted, in order.
//
// It owns nothing of the product and must never be imported by code that
// ships: its answers are made by hand.
package openaifake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Reply is one scripted answer.
type Reply struct {
	Status int // 0 is 200
	Header map[string]string
	Body   string // the JSON body, verbatim
}

// Completion is a 200 reply whose first choice says content and whose
// usage counts in prompt and out completion tokens.
func Completion(content string, in, out int64) Reply {
	body := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1741570283, "model": "fake",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content, "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return Reply{Body: string(b)}
}

// Error is a reply with an OpenAI error body.
func Error(status int, message string, header map[string]string) Reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "error", "param": nil, "code": nil}})
	return Reply{Status: status, Header: header, Body: string(b)}
}

// Request is a request as the server received it.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any // the JSON body decoded
}

// Server is the fake endpoint. Its base URL for a client is URL + "/v1".
type Server struct {
	URL string

	mu       sync.Mutex
	replies  []Reply
	requests []Request
	// Otherwise answers when no scripted reply is left; nil answers 500.
	Otherwise func(Request) Reply
}

// New starts a server that answers with replies, in order; it stops when
// the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{replies: replies}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// BaseURL is what a provider's base_url is set to.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	_ = json.Unmarshal(raw, &req.Body)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var reply Reply
	switch {
	case len(s.replies) > 0:
		reply, s.replies = s.replies[0], s.replies[1:]
	case s.Otherwise != nil:
		reply = s.Otherwise(req)
	default:
		reply = Error(http.StatusInternalServerError, fmt.Sprintf("openaifake: no reply scripted for request %d", len(s.requests)), nil)
	}
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		reply = Error(http.StatusNotFound, "openaifake: unknown endpoint "+r.Method+" "+r.URL.Path, nil)
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(reply.Status, http.StatusOK))
	_, _ = io.WriteString(w, reply.Body)
}
