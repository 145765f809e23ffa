package modelfake

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// responses is the OpenAI Responses API (POST /v1/responses) streamed as
// server-sent events: Codex's protocol.
type responses struct{}

func (responses) name() string { return "responses" }

func (responses) decode(_ string, body []byte) (turn, error) {
	var req struct {
		Model string            `json:"model"`
		Tools []json.RawMessage `json:"tools"`
		Input []struct {
			Type string `json:"type"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, fmt.Errorf("responses request: %w", err)
	}
	t := turn{model: req.Model, stream: true, tools: len(req.Tools) > 0}
	for _, it := range req.Input {
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			t.step++
		}
	}
	return t, nil
}

// item is the answer's one output item.
func (responses) item(a answer) map[string]any {
	id := fmt.Sprintf("%04d", a.in)
	switch {
	case a.step.Tool == "":
		return map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": a.step.Text, "annotations": []any{}}}}
	case a.step.Input == nil:
		return map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "call_id": "call_" + id, "status": "completed",
			"name": a.step.Tool, "input": a.step.Raw}
	}
	return map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "status": "completed",
		"name": a.step.Tool, "arguments": a.step.arguments()}
}

func (p responses) write(w http.ResponseWriter, t turn, a answer) {
	id := fmt.Sprintf("resp_fake%04d", a.in)
	item := p.item(a)
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created",
		"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "model": t.model}})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if a.step.Tool == "" {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"],
			"output_index": 0, "content_index": 0, "delta": a.step.Text})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "object": "response", "status": "completed", "model": t.model, "output": []any{item},
		"usage": map[string]any{
			"input_tokens": a.in, "input_tokens_details": map[string]any{"cached_tokens": a.cached},
			"output_tokens": a.out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": a.in + a.out,
		}}})
}

func (responses) fail(w http.ResponseWriter, status int, message string) {
	code := map[int]string{400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}[status]
	typ := "invalid_request_error"
	if status >= 500 {
		typ, code = "server_error", "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code}})
}
