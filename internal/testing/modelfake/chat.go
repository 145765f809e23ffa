package modelfake

import (
	"encoding/json"
	"fmt"
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

func (p chat) write(w http.ResponseWriter, t turn, a answer) {
	id := fmt.Sprintf("chatcmpl-fake%04d", a.in)
	var call map[string]any
	finish := "stop"
	if a.step.Tool != "" {
		finish = "tool_calls"
		call = map[string]any{"id": fmt.Sprintf("call_%04d", a.in), "type": "function",
			"function": map[string]any{"name": a.step.Tool, "arguments": a.step.arguments()}}
	}
	if !t.stream {
		msg := map[string]any{"role": "assistant", "content": a.step.Text}
		if call != nil {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "chat.completion", "created": 1741570283,
			"model": t.model, "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage": p.usage(a)})
		return
	}
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
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil}})
}
