package provider

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// recording reads a recorded agent output from testdata.
func recording(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseClaudeJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string // in testdata, or "" for input
		in   string
		want report
	}{
		// modelUsage counts the haiku requests too, which usage leaves
		// out; total_cost_usd is the sum of both models' costUSD.
		{name: "success", file: "claude/success.json", want: report{
			Input: 31 + 18244 + 142876 + 2585, Output: 2417 + 128, Total: 31 + 18244 + 142876 + 2585 + 2417 + 128, Tokens: true,
			CostUSD: 0.1873412, Cost: true, HasAnswer: true,
			Answer: "Fixed the failing test in parser_test.go: the tokenizer dropped a trailing newline.\n\nAll tests in ./parser pass now.",
		}},
		{name: "older cost_usd without usage", file: "claude/cost-usd.json", want: report{
			CostUSD: 0.0391, Cost: true, HasAnswer: true,
			Answer: "Done: renamed Config.Load to Config.Read and updated 4 callers.",
		}},
		{name: "is_error", file: "claude/is-error.json", want: report{
			Tokens: true, Cost: true, HasAnswer: true, Answer: "Invalid API key · Please run /login",
			Failure: "API error 401: Invalid API key · Please run /login",
		}},
		{name: "an API error's own wording", in: `{"type":"result","subtype":"success","is_error":true,"api_error_status":400,` +
			`"result":"API Error: 400 {\"type\":\"error\"}","usage":{"input_tokens":3,"output_tokens":1}}`,
			want: report{Input: 3, Output: 1, Total: 4, Tokens: true, HasAnswer: true, Answer: `API Error: 400 {"type":"error"}`,
				Failure: `API Error: 400 {"type":"error"}`}},
		{name: "is_error without a result", in: `{"type":"result","subtype":"success","is_error":true}`,
			want: report{Failure: "is_error"}},
		{name: "error_max_turns without is_error", file: "claude/max-turns.json", want: report{
			Input: 212 + 40318 + 611204, Output: 9876, Total: 212 + 40318 + 611204 + 9876, Tokens: true,
			CostUSD: 0.84127, Cost: true, Failure: "error_max_turns",
		}},
		{name: "verbose array", file: "claude/verbose.json", want: report{
			Input: 12 + 5120 + 47208, Output: 611, Total: 12 + 5120 + 47208 + 611, Tokens: true,
			CostUSD: 0.0412, Cost: true, HasAnswer: true, Answer: "VERDICT: pass\nSCORE: 8",
		}},
		{name: "stream-json", file: "claude/stream.jsonl", want: report{
			Input: 5 + 7924 + 26736, Output: 48, Total: 5 + 7924 + 26736 + 48, Tokens: true,
			CostUSD: 0.10457895, Cost: true, HasAnswer: true, Answer: "The tests pass.",
		}},
		{name: "real capture (Claude Code 2.1.197)", file: "real/claude-code/success.out", want: report{
			// What modelfake served: a title request and three turns.
			Input: 1000 + 1100 + 1200 + 1300, Output: 20 + 23 + 26 + 29, Total: 4698, Tokens: true,
			CostUSD: 0.02518, Cost: true, HasAnswer: true, Answer: "Fixed add in calc.sh.",
		}},
		// Claude Code 2.1.197 with a refused key and one retry allowed:
		// its result, and the stream up to the line auth_failure stops at.
		{name: "real 401", file: "real/claude-code/401.out", want: report{
			Tokens: true, Cost: true, HasAnswer: true, Answer: "Invalid API key · Fix external API key",
			Failure: "API error 401: Invalid API key · Fix external API key",
		}},
		{name: "real 401 stopped at its first retry", in: firstLines(t, "real/claude-code/401.out", 2), want: report{
			Failure: "API error 401 (authentication_failed), retry 1 of 1", Unstarted: true,
		}},
		{name: "real 400 after a turn", file: "real/claude-code/400.out", want: report{
			Input: 1000 + 1100, Output: 20 + 23, Total: 2143, Tokens: true, CostUSD: 0.011529999999999999, Cost: true,
			HasAnswer: true, Answer: "API Error: 400 bad request (scripted)", Failure: "API Error: 400 bad request (scripted)",
		}},
		{name: "retries after a reply: a model answered", in: `{"type":"assistant","message":{}}` + "\n" +
			`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"error_status":529,"error":"overloaded"}`,
			want: report{Failure: "API error 529 (overloaded), retry 2 of 10"}},
		{name: "modelUsage without total_cost_usd", in: `{"type":"result","result":"ok","modelUsage":{` +
			`"a":{"inputTokens":10,"cacheReadInputTokens":5,"outputTokens":2,"costUSD":0.25},` +
			`"b":{"inputTokens":1,"outputTokens":1,"costUSD":0.5}}}`,
			want: report{Input: 16, Output: 3, Total: 19, Tokens: true, CostUSD: 0.75, Cost: true, Answer: "ok", HasAnswer: true}},
		{name: "a model without costUSD: no cost", in: `{"type":"result","result":"ok","modelUsage":{` +
			`"a":{"inputTokens":10,"outputTokens":2,"costUSD":0.25},"b":{"inputTokens":1,"outputTokens":1}}}`,
			want: report{Input: 11, Output: 3, Total: 14, Tokens: true, Answer: "ok", HasAnswer: true}},
		{name: "empty modelUsage: usage", in: `{"type":"result","result":"ok","total_cost_usd":0,` +
			`"usage":{"input_tokens":0,"output_tokens":0},"modelUsage":{}}`,
			want: report{Tokens: true, Cost: true, Answer: "ok", HasAnswer: true}},
		{name: "plain text", file: "claude/not-json.txt", want: report{}},
		{name: "empty", in: "", want: report{}},
		{name: "noise before the result", in: "warning: config migrated\n" + `{"type":"result","result":"ok","total_cost_usd":0.5}` + "\n",
			want: report{CostUSD: 0.5, Cost: true, Answer: "ok", HasAnswer: true}},
		{name: "early version without type", in: `{"result":"hi","cost_usd":0.001}`,
			want: report{CostUSD: 0.001, Cost: true, Answer: "hi", HasAnswer: true}},
		{name: "not a result", in: `{"type":"assistant","message":{"content":[]}}`, want: report{}},
		{name: "negative and odd numbers", in: `{"type":"result","result":"x","total_cost_usd":-1,"usage":{"input_tokens":-5,"output_tokens":"many","cache_read_input_tokens":1e300}}`,
			want: report{Input: maxTokens, Total: maxTokens, Tokens: true, Answer: "x", HasAnswer: true}},
		{name: "usage of the wrong type", in: `{"type":"result","result":"x","usage":[1,2],"total_cost_usd":0.25}`,
			want: report{CostUSD: 0.25, Cost: true, Answer: "x", HasAnswer: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tt.in)
			if tt.file != "" {
				in = recording(t, tt.file)
			}
			if diff := cmp.Diff(tt.want, parseClaudeJSON(in), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("parseClaudeJSON (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseCodexJSONL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		in   string
		want report
	}{
		{name: "exec --json", file: "codex/exec.jsonl", want: report{
			Input: 24763, Output: 1122, Total: 24763 + 1122, Tokens: true, HasAnswer: true,
			Answer: "Fixed `Tokenize` to keep the final token when the input ends in a newline; `go test ./parser/...` passes.",
		}},
		{name: "two turns are summed", file: "codex/resumed.jsonl", want: report{
			Input: 10200 + 15877, Output: 640 + 412, Total: 10200 + 15877 + 640 + 412, Tokens: true,
			HasAnswer: true, Answer: "Coverage is 81.4% now.",
		}},
		{name: "turn failed", file: "codex/failed.jsonl", want: report{
			Failure: "unexpected status 401 Unauthorized: Missing bearer authentication in header", Unstarted: true,
		}},
		// Codex 0.171.0: a refused key before any item, and a 400 after a
		// command ran.
		{name: "real 401", file: "real/codex/401.out", want: report{
			Failure: "unexpected status 401 Unauthorized: invalid x-api-key (scripted), url: http://127.0.0.1:PORT/v1/responses", Unstarted: true,
		}},
		{name: "real 400 after a turn", file: "real/codex/400.out", want: report{
			Failure: `{"error":{"code":"invalid_request_error","message":"bad request (scripted)","param":null,"type":"invalid_request_error"}}`,
		}},
		{name: "older envelope, per-request counts", file: "codex/legacy.jsonl", want: report{
			Input: 8021 + 8655, Output: 317 + 204, Total: 8021 + 8655 + 317 + 204, Tokens: true,
			HasAnswer: true, Answer: "The parser tests pass after the fix.",
		}},
		{name: "older envelope, cumulative counts", file: "codex/legacy-info.jsonl", want: report{
			Input: 19877, Output: 903, Total: 19877 + 903, Tokens: true,
			HasAnswer: true, Answer: "Bumped golang.org/x/net to v0.38.0; go build ./... is clean.",
		}},
		{name: "noise, a bad number and a cut-off line", file: "codex/noisy.jsonl", want: report{
			Input: 4096, Output: 27 + 3, Total: 4096 + 30, Tokens: true, HasAnswer: true, Answer: "Nothing to change.",
		}},
		{name: "token_count without counts", in: `{"id":"0","msg":{"type":"token_count","info":null}}`, want: report{}},
		{name: "plain text", in: "tokens used\n1,234\n", want: report{}},
		{name: "empty", in: "", want: report{}},
		{name: "negative counts", in: `{"type":"turn.completed","usage":{"input_tokens":-100,"output_tokens":-1}}`,
			want: report{Tokens: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tt.in)
			if tt.file != "" {
				in = recording(t, tt.file)
			}
			if diff := cmp.Diff(tt.want, parseCodexJSONL(in)); diff != "" {
				t.Errorf("parseCodexJSONL (-want +got):\n%s", diff)
			}
		})
	}
}

// aiderRegex reads aider's per-message tokens and its session cost.
const aiderRegex = `Tokens: (?P<input>[\d.,]+[kM]?) sent, (?P<output>[\d.,]+[kM]?) received\. Cost: \$[\d.]+ message, \$(?P<cost>[\d.]+) session`

func TestParseUsageRegex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, re string
		file     string
		in       string
		want     report
	}{
		{name: "aider, last match", re: aiderRegex, file: "regex/aider.txt", want: report{
			Input: 12000, Output: 1200, Total: 13200, Tokens: true, CostUSD: 0.05, Cost: true,
		}},
		{name: "total only", re: `tokens used\n(?P<total>[\d,]+)`, in: "codex\nDone.\ntokens used\n1,234\n",
			want: report{Total: 1234, Tokens: true, TotalOnly: true}},
		{name: "total and input", re: `in=(?P<input>\S+) total=(?P<total>\S+)`, in: "in=1.5k total=2k",
			want: report{Input: 1500, Output: 500, Total: 2000, Tokens: true}},
		{name: "total and output", re: `out=(?P<output>\S+) total=(?P<total>\S+)`, in: "out=12.3k total=1.2M",
			want: report{Input: 1187700, Output: 12300, Total: 1200000, Tokens: true}},
		{name: "cost only", re: `cost: (?P<cost>\S+)`, in: "cost: $0.0312\n",
			want: report{CostUSD: 0.0312, Cost: true}},
		{name: "no match", re: `tokens: (?P<total>\d+)`, in: "nothing here", want: report{}},
		{name: "a later empty match is passed over", re: `tokens: (?P<total>[\d,]*)`, in: "tokens: 1,000\ntokens: \n",
			want: report{Total: 1000, Tokens: true, TotalOnly: true}},
		{name: "a match without a number is passed over", re: `total (?P<total>\S+)`, in: "total 42\ntotal unknown\n",
			want: report{Total: 42, Tokens: true, TotalOnly: true}},
		{name: "empty matches everywhere", re: `(?P<total>\d*)`, in: string(make([]byte, 3*regexBatch)) + "77",
			want: report{Total: 77, Tokens: true, TotalOnly: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tt.in)
			if tt.file != "" {
				in = recording(t, tt.file)
			}
			got := parseUsageRegex(regexp.MustCompile(tt.re), in)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("parseUsageRegex (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1234", 1234, true},
		{"1,234", 1234, true},
		{"1_234_567", 1234567, true},
		{"12.3k", 12300, true},
		{"12K", 12000, true},
		{"1.2M", 1200000, true},
		{"3m", 3000000, true},
		{"$0.05", 0.05, true},
		{" $ 1.50 ", 1.5, true},
		{"42.", 42, true},
		{".5", 0.5, true},
		{"", 0, false},
		{"$", 0, false},
		{"k", 0, false},
		{"-5", 0, false},
		{"1e9", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"0x10", 0, false},
		{"1.2.3", 0, false},
		{"9999999999999999", 0, false},
		{"2000000000M", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseAmount(tt.in)
		if ok != tt.ok || (ok && math.Abs(got-tt.want) > 1e-9*tt.want) {
			t.Errorf("parseAmount(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// firstLines is the first n lines of a recording.
func firstLines(t *testing.T, name string, n int) string {
	t.Helper()
	lines := strings.SplitAfter(string(recording(t, name)), "\n")
	return strings.Join(lines[:n], "")
}

// TestClaudeModelUsageAgreesWithCost: in every recording of a Claude Code
// result that has both, total_cost_usd is the sum of modelUsage's costUSD,
// so the tokens summed from modelUsage are the ones its cost is for.
func TestClaudeModelUsageAgreesWithCost(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/claude/*.json")
	real, _ := filepath.Glob("testdata/real/claude-code/*.out")
	checked := 0
	for _, f := range append(files, real...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, ok := findClaudeResult(b)
		if !ok || res.TotalCostUSD == nil || len(res.ModelUsage) == 0 {
			continue
		}
		sum, ok := claudeModelCost(res.ModelUsage)
		if !ok || math.Abs(sum-*res.TotalCostUSD) > 1e-9 {
			t.Errorf("%s: modelUsage costs sum to %v, total_cost_usd is %v", f, sum, *res.TotalCostUSD)
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("only %d recordings with modelUsage and total_cost_usd", checked)
	}
}
