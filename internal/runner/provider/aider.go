package provider

import (
	"bytes"
	"regexp"
)

// aiderReportRE matches one of aider's usage report lines, as
// Coder.calculate_and_show_tokens_and_cost in aider/coders/base_coder.py
// (Aider-AI/aider) prints it after each model reply:
//
//	Tokens: 9.8k sent, 1.2k cache write, 3.4k cache hit, 412 received. Cost: $0.04 message, $0.05 session.
//
// The cache parts appear only when non-zero, and the Cost part only for
// models aider knows a price of. Counts are format_tokens's: exact below
// 1000, then "9.8k" or "12k".
var aiderReportRE = regexp.MustCompile(`^Tokens: ([\d.,]+[kKmM]?) sent(?:, ([\d.,]+[kKmM]?) cache write)?(?:, ([\d.,]+[kKmM]?) cache (?:hit|read))?, ([\d.,]+[kKmM]?) received\.` +
	`(?: Cost: \$[\d.,]+ message, \$([\d.,]+) session\.?)?`)

// parseAiderText reads usage from aider's report lines: tokens are summed
// over every line (each reports one model request; a cache write is already
// part of what was sent, a cache hit is added to the input), and the cost is
// the highest session cost reported, which only grows.
//
// The model's own reply is printed to the same stdout, so an agent can print
// a line of this form itself. Summing and taking the highest means such a
// line can only make a call look more expensive, never cheaper: aider's own
// report of every request is always counted, and its last line is always
// its own (it prints the report after the reply).
func parseAiderText(stdout []byte) report {
	var rep report
	for line := range bytes.Lines(stdout) {
		line = bytes.TrimSpace(line)
		if !bytes.HasPrefix(line, []byte("Tokens: ")) {
			continue
		}
		m := aiderReportRE.FindSubmatch(line)
		if m == nil {
			continue
		}
		sent, _ := parseAmount(string(m[1]))
		hit, _ := parseAmount(string(m[3]))
		received, _ := parseAmount(string(m[4]))
		rep.Input = addTokens(rep.Input, addTokens(tokenCount(sent), tokenCount(hit)))
		rep.Output = addTokens(rep.Output, tokenCount(received))
		rep.Tokens = true
		if cost, ok := parseAmount(string(m[5])); ok && cost >= rep.CostUSD {
			rep.CostUSD, rep.Cost = cost, true
		}
	}
	if rep.Tokens {
		rep.Total = addTokens(rep.Input, rep.Output)
	}
	return rep
}
