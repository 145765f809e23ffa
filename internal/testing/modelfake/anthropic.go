package modelfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropic is the Anthropic Messages API (POST /v1/messages), streamed or
// not: Claude Code's protocol.
type anthropic struct{}

func (anthropic) name() string { return "anthropic" }

func (anthropic) decode(_ string, body []byte) (turn, error) {
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, fmt.Errorf("messages request: %w", err)
	}
	t := turn{model: req.Model, stream: req.Stream, tools: len(req.Tools) > 0}
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				t.step++
			}
		}
	}
	return t, nil
}

// content is the answer's one content block.
func (anthropic) content(a answer, n int) map[string]any {
	if a.step.Tool == "" {
		return map[string]any{"type": "text", "text": a.step.Text}
	}
	return map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake%04d", n), "name": a.step.Tool, "input": a.step.Input}
}

func (p anthropic) write(w http.ResponseWriter, t turn, a answer) {
	id := fmt.Sprintf("msg_fake%04d", a.in)
	stop := "end_turn"
	if a.step.Tool != "" {
		stop = "tool_use"
	}
	// Uncached input, cache reads, and nothing written to the cache.
	usage := map[string]any{"input_tokens": a.in - a.cached, "cache_read_input_tokens": a.cached,
		"cache_creation_input_tokens": 0, "output_tokens": a.out}
	block := p.content(a, int(a.in))
	if !t.stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": "message", "role": "assistant", "model": t.model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	startSSE(w)
	start := map[string]any{"input_tokens": a.in - a.cached, "cache_read_input_tokens": a.cached,
		"cache_creation_input_tokens": 0, "output_tokens": 1}
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": t.model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start}})
	if a.step.Tool == "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": a.step.Text}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": a.step.Tool, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": a.step.arguments()}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": a.out}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

func (anthropic) fail(w http.ResponseWriter, status int, message string) {
	typ := cmp.Or(map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}[status], "api_error")
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})
}
