package provider

import "testing"

func FuzzAiderText(f *testing.F) {
	addRecordings(f, "aider/session.txt", "aider/forged.txt", "aider/no-price.txt", "regex/aider.txt")
	f.Fuzz(func(t *testing.T, stdout []byte) {
		rep := parseAiderText(stdout)
		checkReport(t, rep, stdout)
		if rep.Tokens && rep.Total != addTokens(rep.Input, rep.Output) {
			t.Fatalf("Total %d is not Input+Output in %+v", rep.Total, rep)
		}
		if rep.HasAnswer || rep.Failure != "" {
			t.Fatalf("aider's report carries no answer or failure, got %+v", rep)
		}
	})
}

func FuzzGeminiJSON(f *testing.F) {
	addRecordings(f, "gemini/success.json", "gemini/error.json", "gemini/noisy.txt")
	f.Fuzz(func(t *testing.T, stdout []byte) {
		rep := parseGeminiJSON(stdout)
		checkReport(t, rep, stdout)
		if rep.Cost {
			t.Fatalf("gemini reports no cost, got %+v", rep)
		}
		if rep.Tokens && rep.Total != addTokens(rep.Input, rep.Output) {
			t.Fatalf("Total %d is not Input+Output in %+v", rep.Total, rep)
		}
	})
}

func FuzzOpencodeJSONL(f *testing.F) {
	addRecordings(f, "opencode/run.jsonl", "opencode/error.jsonl")
	f.Fuzz(func(t *testing.T, stdout []byte) {
		rep := parseOpencodeJSONL(stdout)
		checkReport(t, rep, stdout)
		if rep.Cost && rep.CostUSD > maxAmount {
			t.Fatalf("cost above the cap in %+v", rep)
		}
		if rep.Tokens && rep.Total != addTokens(rep.Input, rep.Output) {
			t.Fatalf("Total %d is not Input+Output in %+v", rep.Total, rep)
		}
	})
}
