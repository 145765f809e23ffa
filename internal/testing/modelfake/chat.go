package modelfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// chat is the OpenAI Chat Completions API (POST /v1/chat/completions),
// streamed or not: the protocol of opencode's openai-compatible provider.
type chat struct{}

func (chat) name() string { return "chat" }

func (chat) decode(_ string, body []byte) (turn, error) {
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, fmt.Errorf("chat completions request: %w", err)
	}
	t := turn{model: req.Model, stream: req.Stream, tools: len(req.Tools) > 0}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			t.step++
		}
	}
	return t, nil
}

func (chat) usage(a answer) map[string]any {
	return map[string]any{"prompt_tokens": a.in, "completion_tokens": a.out, "total_tokens": a.in + a.out,
		"prompt_tokens_details": map[string]any{"cached_tokens": a.cached}}
}

// call is the answer's tool call, nil for a text, and its finish reason.
func (chat) call(a answer) (map[string]any, string) {
	if a.step.Tool == "" {
		return nil, "stop"
	}
	return map[string]any{"id": fmt.Sprintf("call_%04d", a.in), "type": "function",
		"function": map[string]any{"name": a.step.Tool, "arguments": a.step.arguments()}}, "tool_calls"
}

// completion is the body of an answer not streamed.
func (p chat) completion(model string, a answer) map[string]any {
	call, finish := p.call(a)
	msg := map[string]any{"role": "assistant", "content": a.step.Text}
	if call != nil {
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
	}
	return map[string]any{"id": fmt.Sprintf("chatcmpl-fake%04d", a.in), "object": "chat.completion", "created": 1741570283,
		"model": model, "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": p.usage(a)}
}

func (p chat) write(w http.ResponseWriter, t turn, a answer) {
	if !t.stream {
		writeJSON(w, http.StatusOK, p.completion(t.model, a))
		return
	}
	id := fmt.Sprintf("chatcmpl-fake%04d", a.in)
	call, finish := p.call(a)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1741570283, "model": t.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	startSSE(w)
	if call != nil {
		call["index"] = 0
		sse(w, "", chunk(map[string]any{"role": "assistant", "tool_calls": []any{call}}, nil))
	} else {
		sse(w, "", chunk(map[string]any{"role": "assistant", "content": a.step.Text}, nil))
	}
	sse(w, "", chunk(map[string]any{}, finish))
	sse(w, "", map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1741570283, "model": t.model,
		"choices": []any{}, "usage": p.usage(a)})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (chat) fail(w http.ResponseWriter, status int, message string) {
	Error(status, message, nil).write(w)
}

// Reply is one answer a test wrote, for Replies.
type Reply struct {
	Status int // 0 is 200
	Header map[string]string
	Body   string // the JSON body, verbatim
}

// Completion is a 200 reply whose one choice says content and whose usage
// counts in prompt and out completion tokens.
func Completion(content string, in, out int64) Reply {
	return Reply{Body: mustJSON(chat{}.completion("fake", answer{step: Step{Text: content}, in: in, out: out}))}
}

// Error is a reply with an OpenAI error body.
func Error(status int, message string, header map[string]string) Reply {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	body := map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil}}
	return Reply{Status: status, Header: header, Body: mustJSON(body)}
}

func (r Reply) write(w http.ResponseWriter) {
	for k, v := range r.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(r.Status, http.StatusOK))
	_, _ = io.WriteString(w, r.Body)
}
