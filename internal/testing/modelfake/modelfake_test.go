package modelfake

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// post sends body to the server's path and returns the status and body.
func post(t *testing.T, s *Server, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServerPlaysTheScript: in each protocol, the step is the number of
// tool results sent back, a request without tools gets a side answer,
// usage differs from request to request, and a failure from a step on
// answers with the protocol's error.
func TestServerPlaysTheScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, first, second string // requests at step 0 and step 1
		side                string // a request without tools
		wantTool, wantText  string // in the answers to first and second
	}{
		{"/v1/messages", `{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`,
			`{"model":"m","messages":[]}`, `"name":"Edit"`, `"text":"done"`},
		{"/v1/responses", `{"model":"m","tools":[{}],"input":[{"type":"message"}]}`,
			`{"model":"m","tools":[{}],"input":[{"type":"custom_tool_call_output"}]}`,
			`{"model":"m","input":[]}`, `"name":"Edit"`, `"text":"done"`},
		{"/v1beta/models/g:streamGenerateContent", `{"tools":[{"functionDeclarations":[{}]}],"contents":[{"parts":[{"text":"hi"}]}]}`,
			`{"tools":[{"functionDeclarations":[{}]}],"contents":[{"parts":[{"functionResponse":{}}]}]}`,
			`{"contents":[]}`, `"name":"Edit"`, `"text":"done"`},
		{"/v1/chat/completions", `{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user"}]}`,
			`{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"tool"}]}`,
			`{"model":"m","messages":[]}`, `"name":"Edit"`, `"content":"done"`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			s := New(t, Script{Steps: []Step{{Tool: "Edit", Input: map[string]any{"a": 1}}, {Text: "done"}}})
			for _, c := range []struct{ body, want string }{{tt.side, "Fix the seeded bug"}, {tt.first, tt.wantTool}, {tt.second, tt.wantText}} {
				if status, got := post(t, s, tt.path, c.body); status != http.StatusOK || !strings.Contains(got, c.want) {
					t.Errorf("answer %d %s, want 200 with %s", status, got, c.want)
				}
			}
			served := s.Served()
			if len(served) != 3 || !served[0].Side || served[1].Step != 0 || served[2].Step != 1 || served[1].Input == served[2].Input {
				t.Errorf("served %+v", served)
			}
			if in, out := s.Total(true); in != served[1].Input+served[2].Input || out != served[1].Output+served[2].Output {
				t.Errorf("main total %d+%d, served %+v", in, out, served)
			}
			if b := s.Bodies(); len(b) != 3 || string(b[1]) != tt.first {
				t.Errorf("bodies %q, want the three requests", b)
			}
		})
	}
}

func TestServerFails(t *testing.T) {
	t.Parallel()
	s := New(t, Script{Steps: []Step{{Text: "done"}}, Fail: &Failure{At: 0, Status: 401, Message: "bad key"}})
	for _, body := range []string{`{"model":"m","tools":[{}],"messages":[]}`, `{"model":"m","messages":[]}`} {
		if status, got := post(t, s, "/v1/messages", body); status != 401 || !strings.Contains(got, `"authentication_error"`) || !strings.Contains(got, "bad key") {
			t.Errorf("answer %d %s, want Anthropic's 401 for every request", status, got)
		}
	}
	if in, out := s.Total(false); in+out != 0 {
		t.Errorf("failed answers counted %d tokens", in+out)
	}
}

// TestReplies: replies answer in order, verbatim, then Otherwise, then a
// 500; every request is recorded with its headers and decoded body.
func TestReplies(t *testing.T) {
	t.Parallel()
	s := Replies(t, Completion("hello", 7, 3), Error(429, "slow down", map[string]string{"Retry-After": "1"}))
	for _, want := range []struct {
		status int
		body   string
	}{{200, `"content":"hello"`}, {429, `"message":"slow down"`}, {500, "no reply scripted for request 3"}} {
		if status, got := post(t, s, "/v1/chat/completions", `{"model":"m"}`); status != want.status || !strings.Contains(got, want.body) {
			t.Errorf("answer %d %s, want %d with %s", status, got, want.status, want.body)
		}
	}
	s.Otherwise = func(r Request) Reply { return Completion("again "+r.Body["model"].(string), 1, 1) }
	if status, got := post(t, s, "/v1/chat/completions", `{"model":"m"}`); status != 200 || !strings.Contains(got, `"content":"again m"`) {
		t.Errorf("answer %d %s, want Otherwise's", status, got)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Header.Get("Content-Type") != "application/json" || reqs[0].Body["model"] != "m" {
		t.Errorf("requests %+v", reqs)
	}
	if s.BaseURL() != s.URL+"/v1" {
		t.Errorf("base URL %s", s.BaseURL())
	}
}

func TestShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string
	}{
		{"one object with a type", `{"type":"result","usage":{"n":1},"modelUsage":{"claude-x":{"n":2}}}`, []string{
			"result:: object", "result:modelUsage.*.n: number", "result:modelUsage.*: object", "result:modelUsage: object",
			"result:type: string", "result:usage.n: number", "result:usage: object"}},
		{"JSON lines", "noise\n" + `{"type":"a","x":[1,"s"]}` + "\n" + `{"type":"b","y":null}`, []string{
			"a:: object", "a:type: string", "a:x: array", "a:x[]: number", "a:x[]: string", "b:: object", "b:type: string", "b:y: null"}},
		{"text, then an object over lines", "Error: oops\n  at x\n{\n  \"error\": {\"code\": 400}\n}\n", []string{
			": object", "error.code: number", "error: object"}},
		{"no JSON", "plain text\n", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tt.want, Shape(bytes.Clone([]byte(tt.in)))); d != "" {
				t.Errorf("Shape (-want +got):\n%s", d)
			}
		})
	}
}
