package modelfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// gemini is the Gemini API's models/{model}:generateContent and
// :streamGenerateContent?alt=sse: Gemini CLI's protocol.
type gemini struct{}

func (gemini) name() string { return "gemini" }

func (gemini) decode(path string, body []byte) (turn, error) {
	var req struct {
		Tools []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
		Contents []struct {
			Parts []struct {
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, fmt.Errorf("generateContent request: %w", err)
	}
	model, _, _ := strings.Cut(path[strings.LastIndex(path, "/")+1:], ":")
	t := turn{model: model, stream: strings.Contains(path, ":streamGenerateContent"),
		json: req.GenerationConfig.ResponseMimeType == "application/json"}
	for _, tl := range req.Tools {
		t.tools = t.tools || len(tl.FunctionDeclarations) > 0
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 {
				t.step++
			}
		}
	}
	return t, nil
}

func (gemini) response(t turn, a answer) map[string]any {
	part := map[string]any{"text": a.step.Text}
	if a.step.Tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": a.step.Tool, "args": a.step.Input}}
	}
	return map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": a.in, "cachedContentTokenCount": a.cached,
			"candidatesTokenCount": a.out, "totalTokenCount": a.in + a.out},
		"modelVersion": t.model, "responseId": fmt.Sprintf("fake%04d", a.in),
	}
}

func (p gemini) write(w http.ResponseWriter, t turn, a answer) {
	if !t.stream {
		writeJSON(w, http.StatusOK, p.response(t, a))
		return
	}
	startSSE(w)
	sse(w, "", p.response(t, a))
}

func (gemini) fail(w http.ResponseWriter, status int, message string) {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[status]
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": message, "status": st}})
}
