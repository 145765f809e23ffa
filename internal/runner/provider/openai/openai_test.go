package openai

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner/provider"
	"github.com/loop-action/loop-action/internal/testing/modelfake"
)

const testKey = "sk-test-0123456789abcdef"

func recorded(t *testing.T, name string, status int, header map[string]string) modelfake.Reply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return modelfake.Reply{Status: status, Header: header, Body: string(b)}
}

// sleeps records the waits of a retry policy instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func client(srv *modelfake.Server, s *sleeps) Client {
	spec := loop.Provider{Type: "openai", Price: &loop.Price{Input: 2, Output: 8}}
	spec.BaseURL, spec.Model, spec.APIKeyEnv = srv.BaseURL(), "gpt-4.1", "TEST_OPENAI_KEY"
	spec.Headers = map[string]string{"HTTP-Referer": "https://example.com/loop", "api-key": "azure-style"}
	spec.Tiers = map[string][]string{loop.TierStrong: {"gpt-4.1-big"}}
	spec.Timeout = loop.D(time.Minute)
	p := DefaultRetry
	p.Sleep = s.sleep
	return Client{Name: "api", Spec: spec, Retry: p}
}

func request(tier string) provider.Request {
	return provider.Request{Node: "build", Prompt: "fix the failing check", Tier: tier,
		Env: []string{"PATH=/usr/bin", "TEST_OPENAI_KEY=" + testKey}}
}

func TestBuilderRequestAndReply(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, recorded(t, "completion.json", 200, nil))
	resp := client(srv, &sleeps{}).Dispatch(context.Background(), request(loop.TierStrong))
	if resp.Err != nil {
		t.Fatal(resp.Err)
	}
	if !strings.Contains(resp.Answer, "<<<<<<< SEARCH\n\treturn a - b\n") {
		t.Errorf("answer %q", resp.Answer)
	}
	wantUsage := provider.Usage{Input: 1117, Output: 46, Total: 1163, CostUSD: (1117*2 + 46*8) / 1e6, CostKnown: true}
	if diff := cmp.Diff(wantUsage, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	got := map[string]any{
		"path": r.Path, "auth": r.Header.Get("Authorization"), "referer": r.Header.Get("HTTP-Referer"),
		"api-key": r.Header.Get("Api-Key"), "model": r.Body["model"], "format": r.Body["response_format"],
		"roles": roles(r.Body), "user": message(r.Body, 1),
	}
	want := map[string]any{
		"path": "/v1/chat/completions", "auth": "Bearer " + testKey, "referer": "https://example.com/loop",
		"api-key": "azure-style", "model": "gpt-4.1-big", "format": nil,
		"roles": []string{"system", "user"}, "user": "fix the failing check",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if !strings.Contains(message(r.Body, 0), "<<<<<<< SEARCH") {
		t.Errorf("the system message does not teach the edit format: %q", message(r.Body, 0))
	}
}

func roles(body map[string]any) []string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		out = append(out, role)
	}
	return out
}

func message(body map[string]any, i int) string {
	msgs, _ := body["messages"].([]any)
	if i >= len(msgs) {
		return ""
	}
	mm, _ := msgs[i].(map[string]any)
	s, _ := mm["content"].(string)
	return s
}

func TestJudgeAsksForJSON(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Completion(`{"verdict":"fail","reason":"no tests","evidence":"x_test.go missing"}`, 10, 5))
	resp := client(srv, &sleeps{}).Judge(context.Background(), request(""))
	if resp.Err != nil {
		t.Fatal(resp.Err)
	}
	r := srv.Requests()[0]
	if diff := cmp.Diff(map[string]any{"type": "json_object"}, r.Body["response_format"]); diff != "" {
		t.Errorf("response_format (-want +got):\n%s", diff)
	}
	if r.Body["model"] != "gpt-4.1" {
		t.Errorf("model %v, want the standard tier's gpt-4.1", r.Body["model"])
	}
}

func TestJudgeFallsBackWithoutJSONMode(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, recorded(t, "error_400_response_format.json", 400, nil),
		modelfake.Completion("Looks fine.\n{\"verdict\":\"pass\",\"reason\":\"r\",\"evidence\":\"e\"}", 10, 5))
	resp := client(srv, &sleeps{}).Judge(context.Background(), request(""))
	if resp.Err != nil {
		t.Fatal(resp.Err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Body["response_format"] == nil || reqs[1].Body["response_format"] != nil {
		t.Fatalf("want a JSON-mode request, then one without: %d requests", len(reqs))
	}
}

func TestFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		replies  func(t *testing.T) []modelfake.Reply
		env      []string
		deadline time.Duration // 0: none
		want     string        // a substring of the error; "" means success
		fatal    bool
		requests int
		waits    []time.Duration
	}{
		{name: "401 names the provider and the variable, and is not retried",
			replies: func(t *testing.T) []modelfake.Reply {
				return []modelfake.Reply{recorded(t, "error_401.json", 401, nil)}
			},
			want: `provider "api": ` + "%URL%" + ` refused the API key in TEST_OPENAI_KEY (401 Unauthorized); check that variable`, fatal: true, requests: 1},
		{name: "404 names the model",
			replies: func(t *testing.T) []modelfake.Reply {
				return []modelfake.Reply{recorded(t, "error_404.json", 404, nil)}
			},
			want: `has no model "gpt-4.1" or no chat completions endpoint (404 Not Found): The model ` + "`gpt-9`", fatal: true, requests: 1},
		{name: "429 waits its Retry-After seconds, then succeeds",
			replies: func(t *testing.T) []modelfake.Reply {
				return []modelfake.Reply{recorded(t, "error_429.json", 429, map[string]string{"Retry-After": "7"}), recorded(t, "completion.json", 200, nil)}
			},
			requests: 2, waits: []time.Duration{7 * time.Second}},
		{name: "500s are retried, then given up",
			replies: func(t *testing.T) []modelfake.Reply {
				r := recorded(t, "error_500.json", 500, nil)
				return []modelfake.Reply{r, r, r, r, r}
			},
			want: `still answered 500 Internal Server Error after retrying: The server had an error`, requests: 5},
		{name: "a Retry-After past the wall-clock budget is not waited for",
			replies: func(t *testing.T) []modelfake.Reply {
				return []modelfake.Reply{recorded(t, "error_429.json", 429, map[string]string{"Retry-After": "3600"}), recorded(t, "completion.json", 200, nil)}
			},
			deadline: time.Minute, want: `still answered 429 Too Many Requests after retrying`, requests: 1},
		{name: "a missing key is fatal and sends nothing", env: []string{"PATH=/bin"},
			replies: func(*testing.T) []modelfake.Reply { return nil },
			want:    `provider "api": the environment variable TEST_OPENAI_KEY (api_key_env) is not set`, fatal: true},
		{name: "an emptied key is missing: its last value counts, as in a child", env: []string{"TEST_OPENAI_KEY=" + testKey, "TEST_OPENAI_KEY="},
			replies: func(*testing.T) []modelfake.Reply { return nil },
			want:    `the environment variable TEST_OPENAI_KEY (api_key_env) is not set`, fatal: true},
		{name: "a 400 is not retried",
			replies: func(*testing.T) []modelfake.Reply {
				return []modelfake.Reply{modelfake.Error(400, "max_tokens is too large", nil)}
			},
			want: `answered 400 Bad Request: max_tokens is too large`, requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := modelfake.Replies(t, tt.replies(t)...)
			s := &sleeps{}
			c := client(srv, s)
			req := request("")
			if tt.env != nil {
				req.Env = tt.env
			}
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			resp := c.Dispatch(ctx, req)
			want := strings.ReplaceAll(tt.want, "%URL%", srv.BaseURL())
			switch {
			case want == "" && resp.Err != nil:
				t.Fatalf("error %v", resp.Err)
			case want != "" && (resp.Err == nil || !strings.Contains(resp.Err.Error(), want)):
				t.Fatalf("error %v, want it to contain %q", resp.Err, want)
			}
			if resp.Err != nil && strings.Contains(resp.Err.Error(), testKey[:10]) {
				t.Errorf("the error carries the key: %v", resp.Err)
			}
			if fatal := resp.Result.StartErr != nil; fatal != tt.fatal {
				t.Errorf("fatal = %v, want %v", fatal, tt.fatal)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if tt.waits != nil {
				if diff := cmp.Diff(tt.waits, s.d); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestTheProcessEnvironmentIsNotRead: the SDK reads OPENAI_API_KEY,
// OPENAI_BASE_URL and OPENAI_CUSTOM_HEADERS by default; the provider's
// client never does.
func TestTheProcessEnvironmentIsNotRead(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-process")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := modelfake.Replies(t, modelfake.Completion("ok", 1, 1))
	c := client(srv, &sleeps{})
	c.Spec.APIKeyEnv = ""
	resp := c.Dispatch(context.Background(), request(""))
	if resp.Err != nil {
		t.Fatal(resp.Err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "" || h.Get("X-Leak") != "" {
		t.Errorf("the process environment reached the request: Authorization %q, X-Leak %q", h.Get("Authorization"), h.Get("X-Leak"))
	}
}

func TestCancelledCallIsNotAFailureOfTheNode(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv.Otherwise = func(modelfake.Request) modelfake.Reply {
		cancel()
		return modelfake.Error(http.StatusServiceUnavailable, "busy", nil)
	}
	resp := client(srv, &sleeps{}).Dispatch(ctx, request(""))
	if resp.Err == nil || !resp.Result.Canceled {
		t.Fatalf("err %v, canceled %v: want a cancelled call", resp.Err, resp.Result.Canceled)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 12 ", 12 * time.Second, true},
		{"-3", 0, false},
		{"999999999999", 0, false},
		{"Tue, 01 Dec 2026 06:00:30 GMT", 30 * time.Second, true},
		{"Tue, 01 Dec 2026 05:00:00 GMT", 0, true},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		d, ok := RetryAfter(tt.in, now)
		if d != tt.want || ok != tt.ok {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tt.in, d, ok, tt.want, tt.ok)
		}
	}
}

func TestAnAnswerPastTheCapIsNotRead(t *testing.T) {
	t.Parallel()
	huge := modelfake.Completion(strings.Repeat("x", MaxReplyBytes), 1, 1)
	srv := modelfake.Replies(t, huge, huge)
	resp := client(srv, &sleeps{}).Dispatch(context.Background(), request(""))
	if resp.Err == nil || !strings.Contains(resp.Err.Error(), "the answer is larger than 16 MiB") {
		t.Fatalf("error %v, want the cap named", resp.Err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: an answer past the cap is not asked again", n)
	}
}
