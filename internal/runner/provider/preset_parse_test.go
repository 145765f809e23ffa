package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// parserCase is one output a parser reads: a recording in testdata, or in.
type parserCase struct {
	name string
	file string
	in   string
	want report
}

func runParserCases(t *testing.T, parse func([]byte) report, tests []parserCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tt.in)
			if tt.file != "" {
				in = recording(t, tt.file)
			}
			got := parse(in)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			checkReport(t, got, in)
		})
	}
}

func TestParseAiderText(t *testing.T) {
	t.Parallel()
	runParserCases(t, parseAiderText, []parserCase{
		{name: "two requests, cache write and hit", file: "aider/session.txt", want: report{
			Input: 9800 + 12000 + 8200, Output: 412 + 1200, Total: 9800 + 12000 + 8200 + 412 + 1200, Tokens: true,
			CostUSD: 0.05, Cost: true,
		}},
		{name: "the regex recording", file: "regex/aider.txt", want: report{
			Input: 9800 + 12000, Output: 412 + 1200, Total: 9800 + 12000 + 412 + 1200, Tokens: true, CostUSD: 0.05, Cost: true,
		}},
		// The model printed a report line of its own that claims next to
		// nothing: aider's own report still counts, and the forged line
		// can only add.
		{name: "a forged cheap line mid-answer", file: "aider/forged.txt", want: report{
			Input: 1 + 2300, Output: 1 + 678, Total: 1 + 2300 + 1 + 678, Tokens: true, CostUSD: 0.0123, Cost: true,
		}},
		{name: "a forged dear line counts against the agent",
			in:   "Tokens: 10 sent, 5 received. Cost: $0.01 message, $0.01 session.\nTokens: 1M sent, 1M received. Cost: $900 message, $900 session.\nTokens: 20 sent, 5 received. Cost: $0.01 message, $0.02 session.\n",
			want: report{Input: 10 + 1e6 + 20, Output: 5 + 1e6 + 5, Total: 10 + 1e6 + 20 + 5 + 1e6 + 5, Tokens: true, CostUSD: 900, Cost: true}},
		{name: "no price", file: "aider/no-price.txt", want: report{Input: 850, Output: 97, Total: 947, Tokens: true}},
		{name: "a line in the middle of another is not a report", in: "say Tokens: 5 sent, 5 received.\n", want: report{}},
		{name: "huge and odd numbers", in: "Tokens: 99999999999999999999k sent, -5 received. Cost: $NaN message, $1e400 session.\nTokens: 1.2.3k sent, 7 received.\n",
			want: report{Output: 7, Total: 7, Tokens: true}},
		{name: "capped", in: "Tokens: 999999999999999 sent, 999999999999999 received.\nTokens: 999999999999999 sent, 1 received.\n",
			want: report{Input: maxTokens, Output: 999999999999999 + 1, Total: maxTokens, Tokens: true}},
		{name: "plain text", in: "nothing to report\n", want: report{}},
		{name: "empty", in: "", want: report{}},
	})
}

func TestParseGeminiJSON(t *testing.T) {
	t.Parallel()
	answer := "Fixed the off-by-one in tokenize.go; go test ./parser/... passes."
	success := report{Input: 24401 + 20803, Output: 215 + 103 + 716 + 138, Total: 24401 + 20803 + 215 + 103 + 716 + 138,
		Tokens: true, HasAnswer: true, Answer: answer}
	runParserCases(t, parseGeminiJSON, []parserCase{
		{name: "two models", file: "gemini/success.json", want: success},
		{name: "a line before the object", file: "gemini/noisy.txt", want: success},
		{name: "error", file: "gemini/error.json", want: report{HasAnswer: true, Answer: "Partial response before error",
			Failure: "ApiError: Rate limit exceeded"}},
		{name: "error without a type", in: `{"error":{"message":"quota\nexceeded"}}`, want: report{Failure: "exceeded"}},
		{name: "tool prompts are input", in: `{"response":"ok","stats":{"models":{"m":{"tokens":{"prompt":10,"tool":5,"candidates":2}}}}}`,
			want: report{Input: 15, Output: 2, Total: 17, Tokens: true, HasAnswer: true, Answer: "ok"}},
		{name: "odd numbers", in: `{"response":"x","stats":{"models":{"a":{"tokens":{"prompt":-4,"candidates":"many","thoughts":1e300}},"b":{"tokens":[]},"c":{"tokens":{"prompt":1e300}}}}}`,
			want: report{Input: maxTokens, Output: maxTokens, Total: maxTokens, Tokens: true, HasAnswer: true, Answer: "x"}},
		{name: "stats of the wrong type", in: `{"response":"x","stats":"lots"}`, want: report{HasAnswer: true, Answer: "x"}},
		{name: "no known field", in: `{"hello":"world"}`, want: report{}},
		{name: "cut off", in: "{\n  \"response\": \"x\",\n  \"stats\": {\n", want: report{}},
		{name: "plain text", in: "The capital of France is Paris.\n", want: report{}},
		{name: "empty", in: "", want: report{}},
		{name: "real capture (Gemini CLI 0.61.0)", file: "real/gemini/success.out", want: report{
			// What modelfake served: the router's request and three turns.
			Input: 1000 + 1100 + 1200 + 1300, Output: 20 + 23 + 26 + 29, Total: 4698, Tokens: true,
			HasAnswer: true, Answer: "Fixed add in calc.sh.",
		}},
	})
}

// TestParseGeminiOutput: Gemini CLI prints its error report on stderr and
// nothing on stdout; the report is read from the tail of all it printed.
func TestParseGeminiOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, stdout, tail string
		want               report
	}{
		{name: "400 on stderr", tail: "real/gemini/400.err", want: report{Failure: "400 INVALID_ARGUMENT: bad request (scripted)"}},
		{name: "401 on stderr", tail: "real/gemini/401.err", want: report{Failure: "401 UNAUTHENTICATED: invalid x-api-key (scripted)", Unstarted: true}},
		{name: "500 on stderr", tail: "real/gemini/500.err", want: report{Failure: "500 INTERNAL: overloaded (scripted)"}},
		{name: "stdout first", stdout: "real/gemini/success.out", tail: "real/gemini/400.err", want: report{
			Input: 4600, Output: 98, Total: 4698, Tokens: true, HasAnswer: true, Answer: "Fixed add in calc.sh."}},
		{name: "an untrusted folder, before any request", tail: "real/gemini/untrusted.err", want: report{Unstarted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, tail []byte
			if tt.stdout != "" {
				stdout = recording(t, tt.stdout)
			}
			tail = append(append(tail, stdout...), recording(t, tt.tail)...)
			if diff := cmp.Diff(tt.want, parseGeminiOutput(stdout, tail)); diff != "" {
				t.Errorf("parseGeminiOutput (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseOpencodeJSONL(t *testing.T) {
	t.Parallel()
	runParserCases(t, parseOpencodeJSONL, []parserCase{
		// The bash tool printed a report line and a step_finish of its own:
		// inside a JSON string, they are not events.
		{name: "two steps", file: "opencode/run.jsonl", want: report{
			Input: 1520 + 11008 + 2048 + 310 + 14080, Output: 188 + 64 + 95,
			Total: 1520 + 11008 + 2048 + 310 + 14080 + 188 + 64 + 95, Tokens: true, CostUSD: 0.0213 + 0.0087, Cost: true,
			HasAnswer: true, Answer: "Fixed the trailing-newline case in tokenize.go; the parser tests pass.",
		}},
		{name: "error", file: "opencode/error.jsonl", want: report{Failure: "Invalid API key"}},
		{name: "the last step's text parts are the answer", in: `{"type":"step_start","part":{}}` + "\n" +
			`{"type":"text","part":{"text":"Looking."}}` + "\n" + `{"type":"step_start","part":{}}` + "\n" +
			`{"type":"text","part":{"text":"VERDICT: pass"}}` + "\n" + `{"type":"text","part":{"text":"SCORE: 8"}}` + "\n" +
			`{"type":"step_start","part":{}}` + "\n" + `{"type":"step_finish","part":{"reason":"stop"}}`,
			want: report{Answer: "VERDICT: pass\nSCORE: 8", HasAnswer: true}},
		{name: "error with a name only", in: `{"type":"error","error":{"name":"MessageOutputLengthError"}}`,
			want: report{Failure: "MessageOutputLengthError", Unstarted: true}},
		// opencode 1.18.33: a refused key before any step, and a 400 after one.
		{name: "real 401", file: "real/opencode/401.out", want: report{Failure: "invalid x-api-key (scripted)", Unstarted: true}},
		{name: "real 400 after a step", file: "real/opencode/400.out", want: report{
			Input: 1100, Output: 23, Total: 1123, Tokens: true, CostUSD: 0, Cost: true, Failure: "bad request (scripted)"}},
		{name: "odd numbers", in: `{"type":"step_finish","part":{"cost":-1,"tokens":{"input":-5,"output":"x","cache":{"read":1e300}}}}` + "\n" +
			`{"type":"step_finish","part":{"cost":1e300,"tokens":{"reasoning":3}}}` + "\n" +
			`{"type":"step_finish","part":{"cost":1e300}}`,
			want: report{Input: maxTokens, Output: 3, Total: maxTokens, Tokens: true, CostUSD: maxAmount, Cost: true}},
		{name: "noise and a cut-off line", in: "warming up\n" + `{"type":"step_finish","part":{"tokens":{"input":7,"output":1}}}` + "\n" + `{"type":"step_finish","part":{"tokens":{"input":`,
			want: report{Input: 7, Output: 1, Total: 8, Tokens: true}},
		{name: "plain text", in: "Fixed it.\n", want: report{}},
		{name: "empty", in: "", want: report{}},
	})
}
