package provider

import (
	"bytes"
	"testing"
)

// hostileOutputs are agent outputs of the full kept size (StdoutBytes) made
// to be slow to parse: many report-like lines, many lines that start an
// object, many JSON lines.
func hostileOutputs() map[string][]byte {
	fill := func(line string) []byte { return bytes.Repeat([]byte(line), StdoutBytes/len(line)) }
	return map[string][]byte{
		"aider report lines": fill("Tokens: 9.8k sent, 1.2k cache write, 3k cache hit, 412 received. Cost: $0.04 message, $0.05 session.\n"),
		"aider near misses":  fill("Tokens: 9.8k sent, 1.2k cache write, 3k cache hit, 412 receive\n"),
		"gemini brace lines": fill("{\n"),
		"gemini open object": append([]byte("{\"response\":\""), fill("x")...),
		"opencode steps":     fill(`{"type":"step_finish","part":{"cost":0.01,"tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}}}}` + "\n"),
	}
}

// BenchmarkPresetParsers measures the new usage parsers on hostile outputs
// of the full kept size: each must stay linear in the output.
func BenchmarkPresetParsers(b *testing.B) {
	parsers := map[string]func([]byte) report{"aider": parseAiderText, "gemini": parseGeminiJSON, "opencode": parseOpencodeJSONL}
	for name, out := range hostileOutputs() {
		for pname, parse := range parsers {
			if !bytes.HasPrefix([]byte(name), []byte(pname)) {
				continue
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				for b.Loop() {
					parse(out)
				}
			})
		}
	}
}
