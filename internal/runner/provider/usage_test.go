package provider

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/loop-action/loop-action/internal/loop"
)

func TestUsageOf(t *testing.T) {
	t.Parallel()
	price := &loop.Price{Input: 3, Output: 15}
	tests := []struct {
		name           string
		prompt, stdout string
		rep            report
		price          *loop.Price
		want           Usage
	}{
		{name: "nothing reported, no price", prompt: "12345", stdout: "abc",
			want: Usage{Input: 1, Output: 1, Total: 2, Estimated: true}},
		{name: "nothing reported, priced", prompt: strings.Repeat("p", 4000), stdout: strings.Repeat("o", 2001), price: price,
			want: Usage{Input: 1000, Output: 501, Total: 1501, Estimated: true, CostKnown: true, CostUSD: (1000*3 + 501*15) / 1e6}},
		{name: "tokens and cost reported, price ignored", price: price,
			rep:  report{Input: 10, Output: 20, Total: 30, Tokens: true, CostUSD: 0.5, Cost: true},
			want: Usage{Input: 10, Output: 20, Total: 30, CostUSD: 0.5, CostKnown: true}},
		{name: "tokens reported, priced", price: price,
			rep:  report{Input: 1_000_000, Output: 100_000, Total: 1_100_000, Tokens: true},
			want: Usage{Input: 1_000_000, Output: 100_000, Total: 1_100_000, CostUSD: 3 + 1.5, CostKnown: true}},
		{name: "tokens reported, no price",
			rep:  report{Input: 7, Output: 8, Total: 15, Tokens: true},
			want: Usage{Input: 7, Output: 8, Total: 15}},
		{name: "total only, priced at the higher rate", price: price,
			rep:  report{Total: 2_000_000, Tokens: true, TotalOnly: true},
			want: Usage{Total: 2_000_000, CostUSD: 30, CostKnown: true}},
		{name: "cost reported, tokens estimated", prompt: "abcd", stdout: "efgh", price: price,
			rep:  report{CostUSD: 0.01, Cost: true},
			want: Usage{Input: 1, Output: 1, Total: 2, Estimated: true, CostUSD: 0.01, CostKnown: true}},
		// opencode reports cost 0 for a model it has no price for.
		{name: "a reported cost of 0 for tokens yields to the price", price: price,
			rep:  report{Input: 1_000_000, Output: 100_000, Total: 1_100_000, Tokens: true, Cost: true},
			want: Usage{Input: 1_000_000, Output: 100_000, Total: 1_100_000, CostUSD: 3 + 1.5, CostKnown: true}},
		{name: "a reported cost of 0 stands without a price",
			rep:  report{Input: 10, Output: 20, Total: 30, Tokens: true, Cost: true},
			want: Usage{Input: 10, Output: 20, Total: 30, CostKnown: true}},
		{name: "a reported cost of 0 for no tokens stands", price: price,
			rep:  report{Tokens: true, Cost: true},
			want: Usage{CostKnown: true}},
		{name: "negative price counts as free", rep: report{Input: 5, Output: 5, Total: 10, Tokens: true},
			price: &loop.Price{Input: -1, Output: -2},
			want:  Usage{Input: 5, Output: 5, Total: 10, CostKnown: true}},
		{name: "NaN price", rep: report{Input: 5, Output: 5, Total: 10, Tokens: true},
			price: &loop.Price{Input: math.NaN(), Output: 1},
			want:  Usage{Input: 5, Output: 5, Total: 10, CostUSD: 5e-6, CostKnown: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := usageOf(tt.prompt, int64(len(tt.stdout)), tt.rep, tt.price)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("usageOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prompt, stdout int64
		want           Usage
	}{
		{0, 0, Usage{Estimated: true}},
		{1, 0, Usage{Output: 1, Total: 1, Estimated: true}},
		{0, 1, Usage{Output: 1, Total: 1, Estimated: true}},
		{4, 4, Usage{Input: 1, Output: 1, Total: 2, Estimated: true}},
		{5, 0, Usage{Input: 1, Output: 1, Total: 2, Estimated: true}},
		{7, 6, Usage{Input: 1, Output: 3, Total: 4, Estimated: true}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, estimate(tt.prompt, tt.stdout)); diff != "" {
			t.Errorf("estimate(%d, %d) (-want +got):\n%s", tt.prompt, tt.stdout, diff)
		}
	}
}

func TestUsageReader(t *testing.T) {
	t.Parallel()
	for _, usage := range []string{"", "none", "claude-json", "codex-jsonl", `regex:(?P<total>\d+)`} {
		if _, err := (Command{Spec: loop.Provider{Usage: usage}}).usageReader(); err != nil {
			t.Errorf("usage %q: %v", usage, err)
		}
	}
	for _, usage := range []string{"claude", "regex:(", "REGEX:x"} {
		if _, err := (Command{Spec: loop.Provider{Usage: usage}}).usageReader(); err == nil {
			t.Errorf("usage %q: no error", usage)
		}
	}
}

func TestLastLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"first\nsecond\n\n  \n", "second"},
		{"a\r\nerror: \x1b[31mred\x1b[0m\r\n", "error: red"},
		// Gemini CLI's refusal of an untrusted folder, in colour.
		{"\x1b[31mGemini CLI is not running in a trusted directory.\x1b[0m\n", "Gemini CLI is not running in a trusted directory."},
		{"\x1b]8;;https://example.com\x07link\x1b]8;;\x07 and \x1b[1;2Hmore", "link and more"},
		{"}\n", "}"},
		{"status: 500\n}\n)\n", "status: 500"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{strings.Repeat("é", 200), strings.Repeat("é", maxDetail/2) + "…"},
	}
	for _, tt := range tests {
		if got := lastLine([]byte(tt.in)); got != tt.want {
			t.Errorf("lastLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
