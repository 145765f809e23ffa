package provider

import (
	"math"
	"regexp"
	"testing"

	"github.com/loop-action/loop-action/internal/loop"
)

// checkReport fails the test when a parser's report breaks its promises:
// no negative or absurd numbers, a cost only when one was read, and a Usage
// built from it that is no worse.
func checkReport(t *testing.T, rep report, stdout []byte) {
	t.Helper()
	for _, n := range []int64{rep.Input, rep.Output, rep.Total} {
		if n < 0 || n > maxTokens {
			t.Fatalf("token count %d out of range in %+v", n, rep)
		}
	}
	if math.IsNaN(rep.CostUSD) || math.IsInf(rep.CostUSD, 0) || rep.CostUSD < 0 || (!rep.Cost && rep.CostUSD != 0) {
		t.Fatalf("bad cost in %+v", rep)
	}
	if !rep.Tokens && (rep.Input != 0 || rep.Output != 0 || rep.Total != 0) {
		t.Fatalf("tokens without Tokens in %+v", rep)
	}
	u := usageOf("a prompt", int64(len(stdout)), rep, &loop.Price{Input: 3, Output: 15})
	if u.Input < 0 || u.Output < 0 || u.Total < 0 || !(u.CostUSD >= 0) || !u.CostKnown {
		t.Fatalf("usageOf(%+v) = %+v", rep, u)
	}
}

// addRecordings seeds f with the recorded outputs in testdata.
func addRecordings(f *testing.F, names ...string) {
	for _, name := range names {
		f.Add(recording(f, name))
	}
}

func FuzzClaudeJSON(f *testing.F) {
	addRecordings(f, "claude/success.json", "claude/cost-usd.json", "claude/is-error.json",
		"claude/max-turns.json", "claude/verbose.json", "claude/stream.jsonl", "claude/not-json.txt")
	f.Fuzz(func(t *testing.T, stdout []byte) {
		rep := parseClaudeJSON(stdout)
		checkReport(t, rep, stdout)
		if rep.Tokens && rep.Total != addTokens(rep.Input, rep.Output) {
			t.Fatalf("Total %d is not Input+Output in %+v", rep.Total, rep)
		}
	})
}

func FuzzCodexJSONL(f *testing.F) {
	addRecordings(f, "codex/exec.jsonl", "codex/resumed.jsonl", "codex/failed.jsonl",
		"codex/legacy.jsonl", "codex/legacy-info.jsonl", "codex/noisy.jsonl")
	f.Fuzz(func(t *testing.T, stdout []byte) {
		rep := parseCodexJSONL(stdout)
		checkReport(t, rep, stdout)
		if rep.Cost {
			t.Fatalf("codex reports no cost, got %+v", rep)
		}
		if rep.Tokens && rep.Total != addTokens(rep.Input, rep.Output) {
			t.Fatalf("Total %d is not Input+Output in %+v", rep.Total, rep)
		}
	})
}

func FuzzUsageRegex(f *testing.F) {
	aider := recording(f, "regex/aider.txt")
	f.Add(aiderRegex, aider)
	f.Add(`Tokens: (?P<total>[\d.,]+[kM]?) sent`, aider)
	f.Add(`tokens used\n(?P<total>[\d,]+)`, []byte("tokens used\n1,234\n"))
	f.Add(`in=(?P<input>\S+) out=(?P<output>\S+) total=(?P<total>\S+) cost=(?P<cost>\S+)`, []byte("in=5 out=9 total=3 cost=$-1"))
	f.Add(`(?P<total>\d*)`, []byte("x 12k y"))
	f.Fuzz(func(t *testing.T, pattern string, stdout []byte) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			t.Skip()
		}
		checkReport(t, parseUsageRegex(re, stdout), stdout)
	})
}
