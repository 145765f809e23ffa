//go:build unix

package provider

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/loop-action/loop-action/internal/loop"
)

// TestDispatchPresetUsage runs each new parser through a real call of a
// replaying agent: the tokens and cost the tool reported become the call's
// usage, not an estimate.
func TestDispatchPresetUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, recording, usage string
		price                  *loop.Price
		wantAnswer             string
		want                   Usage
	}{
		{"aider-text", "aider/session.txt", "aider-text", nil, "<stdout>",
			Usage{Input: 30000, Output: 1612, Total: 31612, CostUSD: 0.05, CostKnown: true}},
		{"aider-text priced", "aider/no-price.txt", "aider-text", &loop.Price{Input: 1, Output: 2}, "<stdout>",
			Usage{Input: 850, Output: 97, Total: 947, CostUSD: (850 + 97*2.0) / 1e6, CostKnown: true}},
		{"gemini-json", "gemini/success.json", "gemini-json", nil,
			"Fixed the off-by-one in tokenize.go; go test ./parser/... passes.",
			Usage{Input: 45204, Output: 1172, Total: 46376}},
		{"opencode-jsonl", "opencode/run.jsonl", "opencode-jsonl", nil,
			"Fixed the trailing-newline case in tokenize.go; the parser tests pass.",
			Usage{Input: 28966, Output: 347, Total: 29313, CostUSD: 0.03, CostKnown: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := loop.Provider{Command: []string{"sh", script(t, "replay.sh"), tt.recording}, Usage: tt.usage, Price: tt.price}
			resp := dispatch(t, t.Context(), Command{Name: tt.name, Spec: spec}, request(t))
			mustSucceed(t, resp)
			if tt.wantAnswer == "<stdout>" {
				tt.wantAnswer = string(recording(t, tt.recording))
			}
			if diff := cmp.Diff(tt.wantAnswer, resp.Answer); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, resp.Usage, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDispatchPresetFailures shows that an error the tool reports fails the
// call even when it exits 0.
func TestDispatchPresetFailures(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ usage, recording, want string }{
		{"gemini-json", "gemini/error.json", "reported an error after"},
		{"opencode-jsonl", "opencode/error.jsonl", "Invalid API key"},
	} {
		spec := loop.Provider{Command: []string{"sh", script(t, "replay.sh"), tt.recording}, Usage: tt.usage}
		resp := dispatch(t, t.Context(), Command{Name: tt.usage, Spec: spec}, request(t))
		if resp.Err == nil || !strings.Contains(resp.Err.Error(), tt.want) {
			t.Errorf("%s: Err = %v, want one containing %q", tt.usage, resp.Err, tt.want)
		}
	}
}
