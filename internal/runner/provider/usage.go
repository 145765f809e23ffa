package provider

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/loop-action/loop-action/internal/loop"
)

// report is what a usage parser read from an agent's stdout. Parsers are
// pure: they never fail, never panic, and never report a negative number.
type report struct {
	Input, Output, Total int64
	// Tokens reports that token counts were read.
	Tokens bool
	// TotalOnly reports that only Total was read: how it splits between
	// input and output is unknown.
	TotalOnly bool
	CostUSD   float64
	// Cost reports that a cost was read.
	Cost bool
	// Answer is the agent's final text, when HasAnswer.
	Answer    string
	HasAnswer bool
	// Failure is the agent's own report that the call failed, in one line;
	// "" when it reported none.
	Failure string
	// Unstarted reports that, by the agent's own report, the call failed
	// before any model answered (a refused key, an untrusted folder): it
	// is charged no estimated tokens.
	Unstarted bool
}

// found reports whether the parser read any usage at all.
func (r report) found() bool { return r.Tokens || r.Cost }

// usageReader reads a report from an agent's stdout, or from the tail of
// all it printed (stdout and stderr), where a CLI reports its errors on
// stderr.
type usageReader func(stdout, tail []byte) report

// stdoutOnly is a usageReader of a parser that reads stdout alone.
func stdoutOnly(parse func([]byte) report) usageReader {
	return func(stdout, _ []byte) report { return parse(stdout) }
}

// usageReader returns the parser the provider's usage setting names.
func (c Command) usageReader() (usageReader, error) {
	u := c.Spec.Usage
	switch {
	case u == "" || u == "none":
		return func(_, _ []byte) report { return report{} }, nil
	case u == "claude-json":
		return stdoutOnly(parseClaudeJSON), nil
	case u == "codex-jsonl":
		return stdoutOnly(parseCodexJSONL), nil
	case u == "aider-text":
		return stdoutOnly(parseAiderText), nil
	case u == "gemini-json":
		return parseGeminiOutput, nil
	case u == "opencode-jsonl":
		return stdoutOnly(parseOpencodeJSONL), nil
	case strings.HasPrefix(u, "regex:"):
		re, err := regexp.Compile(strings.TrimPrefix(u, "regex:"))
		if err != nil {
			return nil, fmt.Errorf("usage regex: %w", err)
		}
		return stdoutOnly(func(out []byte) report { return parseUsageRegex(re, out) }), nil
	}
	return nil, fmt.Errorf("usage must be none, claude-json, codex-jsonl, aider-text, gemini-json, opencode-jsonl or regex:<re>, not %q", u)
}

// parses reports whether the provider's usage setting names a parser.
func (c Command) parses() bool { return c.Spec.Usage != "" && c.Spec.Usage != "none" }

// usageOf turns a report into the Usage of a call: tokens are estimated when
// the agent reported none, and priced when it reported no cost — or a cost
// of 0 for tokens > 0, which is what opencode reports for a model it has no
// price for (a custom or local provider: just where a user writes price).
func usageOf(prompt string, outputBytes int64, rep report, price *loop.Price) Usage {
	u := Usage{Input: rep.Input, Output: rep.Output, Total: rep.Total}
	split := !rep.TotalOnly
	if !rep.Tokens && !rep.Unstarted {
		u, split = estimate(int64(len(prompt)), outputBytes), true
	}
	switch {
	case rep.Cost && !(rep.CostUSD == 0 && u.Total > 0 && price != nil):
		u.CostUSD, u.CostKnown = rep.CostUSD, true
	case price != nil:
		u.CostUSD, u.CostKnown = priced(u, split, *price), true
	}
	return u
}

// estimate is the usage of a call whose agent reported no tokens: a token
// for every 4 bytes of prompt and of everything the agent printed (all of
// it, not only the part kept), rounded up; the prompt's share is input,
// the rest output.
func estimate(promptBytes, stdoutBytes int64) Usage {
	total := (promptBytes + stdoutBytes + 3) / 4
	input := promptBytes / 4
	return Usage{Input: input, Output: total - input, Total: total, Estimated: true}
}

// priced is what u's tokens cost at price (USD per million tokens). When the
// split between input and output is unknown, every token is priced at the
// higher of the two rates, so that a budget is never undercounted.
func priced(u Usage, split bool, price loop.Price) float64 {
	in, out := rate(price.Input), rate(price.Output)
	if !split {
		return float64(u.Total) * max(in, out) / 1e6
	}
	return (float64(u.Input)*in + float64(u.Output)*out) / 1e6
}

// rate is a price per million tokens, with anything but a positive number
// (a negative price, NaN) counting as free.
func rate(usdPerMillion float64) float64 {
	if usdPerMillion > 0 {
		return usdPerMillion
	}
	return 0
}

// maxTokens caps every token count read from output: far above anything real,
// far below where int64 arithmetic could overflow.
const maxTokens = 1 << 50

// tokenCount converts a number read from output to a token count in
// [0, maxTokens].
func tokenCount(f float64) int64 {
	switch {
	case !(f > 0): // also NaN
		return 0
	case f >= maxTokens:
		return maxTokens
	}
	return int64(math.Round(f))
}

// addTokens adds two token counts in [0, maxTokens], saturating at maxTokens.
func addTokens(a, b int64) int64 {
	return min(a+b, maxTokens)
}

// sumTokens adds up the counts that are present; ok reports that any is.
func sumTokens(counts ...*float64) (sum int64, ok bool) {
	for _, f := range counts {
		if f != nil {
			sum, ok = addTokens(sum, tokenCount(*f)), true
		}
	}
	return sum, ok
}

// costUSD accepts a cost read from output when it is a finite, non-negative
// number.
func costUSD(f float64) (float64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	return f, true
}
