package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr(f float64) *float64 { return &f }

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  string
		want    JudgeVerdict
		wantErr string
	}{
		{"bare object", `{"verdict":"pass","reason":"r","evidence":"e","score":8}`,
			JudgeVerdict{Verdict: "pass", Reason: "r", Evidence: "e", Score: ptr(8)}, ""},
		{"fenced block after prose", "I read the diff.\n\n```json\n{\"verdict\": \"FAIL\", \"reason\": \"assert removed\", \"suggested_fix\": \"restore it\"}\n```\n",
			JudgeVerdict{Verdict: "fail", Reason: "assert removed", SuggestedFix: "restore it"}, ""},
		{"last object wins", `{"verdict":"fail","reason":"draft"} then {"verdict":"pass","evidence":"final"}`,
			JudgeVerdict{Verdict: "pass", Evidence: "final"}, ""},
		{"objects without verdict are skipped", `{"verdict":"pass","evidence":"x"} {"note": {"nested": 1}}`,
			JudgeVerdict{Verdict: "pass", Evidence: "x"}, ""},
		{"nested objects inside the verdict", `{"verdict":"pass","evidence":"x","details":{"a":{"b":1}}}`,
			JudgeVerdict{Verdict: "pass", Evidence: "x"}, ""},
		{"evidence as a list", `{"verdict":"pass","evidence":["a.go:1","b.go:2"]}`,
			JudgeVerdict{Verdict: "pass", Evidence: "a.go:1; b.go:2"}, ""},
		{"null score", `{"verdict":"pass","evidence":"e","score":null}`, JudgeVerdict{Verdict: "pass", Evidence: "e"}, ""},
		{"braces in prose", "if (x) { y } else {\n{\"verdict\":\"fail\",\"reason\":\"no\"}",
			JudgeVerdict{Verdict: "fail", Reason: "no"}, ""},
		{"no JSON", "All tests pass, trust me.", JudgeVerdict{}, `no JSON object with a "verdict" key`},
		{"truncated JSON", `{"verdict":"pass","evidence":"`, JudgeVerdict{}, `no JSON object with a "verdict" key`},
		{"unknown verdict", `{"verdict":"maybe"}`, JudgeVerdict{Verdict: "maybe"}, `"verdict" must be "pass" or "fail", not "maybe"`},
		{"verdict not a string", `{"verdict":true}`, JudgeVerdict{}, `"verdict" must be a string: true`},
		{"score out of range", `{"verdict":"pass","evidence":"e","score":11}`, JudgeVerdict{Verdict: "pass", Evidence: "e"}, `"score" must be a number from 0 to 10, not 11`},
		{"score as a string", `{"verdict":"pass","evidence":"e","score":"9"}`, JudgeVerdict{Verdict: "pass", Evidence: "e"}, `"score" must be a number from 0 to 10, not "9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseVerdict(tt.answer)
			if msg := errString(err); msg != tt.wantErr {
				t.Errorf("error = %q, want %q", msg, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestParseVerdictBounded(t *testing.T) {
	t.Parallel()
	// A hostile answer: megabytes of unbalanced braces before the verdict.
	answer := strings.Repeat("{", 4<<20) + `{"verdict":"pass","evidence":"e"}`
	v, err := ParseVerdict(answer)
	if err != nil || v.Verdict != "pass" {
		t.Fatalf("ParseVerdict = %+v, %v; want pass", v, err)
	}
	// The verdict beyond the search window is not found: fail closed.
	old := `{"verdict":"pass","evidence":"e"}` + strings.Repeat("x", verdictWindow+1)
	if _, err := ParseVerdict(old); !errors.Is(err, ErrNoVerdict) {
		t.Fatalf("verdict outside the window: err = %v, want ErrNoVerdict", err)
	}
}

func TestJudgeRulings(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, fixture)
	answer := func(a ...string) JudgeResult { return JudgeResult{Node: "review", Provider: "reviewer", Answers: a} }
	tests := []struct {
		name   string
		r      *JudgeResult
		status Status
		line   string
	}{
		{"pass", ptrJ(answer(`{"verdict":"pass","evidence":"a_test.go:3 still asserts","score":9}`)), Pass,
			`judge "review" ruled pass (score 9/10): a_test.go:3 still asserts`},
		{"fail", ptrJ(answer(`{"verdict":"fail","reason":"TestX was deleted","score":2}`)), Fail,
			`judge "review" ruled fail (score 2/10): TestX was deleted`},
		{"pass without evidence", ptrJ(answer(`{"verdict":"pass","score":10}`)), Fail,
			`judge "review" ruled pass without evidence, which counts as a fail`},
		{"score below min_score", ptrJ(answer(`{"verdict":"pass","evidence":"e","reason":"meh","score":5}`)), Fail,
			`judge "review" ruled pass with score 5, below min_score 7: meh`},
		{"no score with min_score", ptrJ(answer(`{"verdict":"pass","evidence":"e"}`)), Fail,
			`judge "review" ruled pass without a score; min_score is 7`},
		{"unparseable twice", ptrJ(answer("I think it is fine", `{"verdict": "pass"`)), Fail,
			`judge "review" gave no parseable verdict in 2 attempts: no JSON object with a "verdict" key`},
		{"parseable on the retry", ptrJ(answer("garbage", `{"verdict":"pass","evidence":"e","score":7}`)), Pass,
			`judge "review" ruled pass (score 7/10): e`},
		{"shares the builder's provider", &JudgeResult{Node: "review", Provider: "builder", Answers: []string{`{"verdict":"pass","evidence":"e","score":10}`}}, Fail,
			`judge "review" refused: it ran on provider "builder", which also runs builder "fixer" of this goal; a judge must be independent`},
		{"could not run", &JudgeResult{Node: "review", Provider: "reviewer", Err: "timed out after 10m"}, Fail,
			`judge "review" could not run: timed out after 10m`},
		{"no answer", ptrJ(answer()), Fail, `judge "review" gave no answer`},
		{"absent", nil, Fail, `judge "review" gave no verdict this iteration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Evidence{}
			if tt.r != nil {
				ev.Judges = map[string]JudgeResult{"review": *tt.r}
			}
			status, line := ruling(t, cfg, "judged", ev)
			if diff := cmp.Diff([]string{string(tt.status), tt.line}, []string{string(status), line}); diff != "" {
				t.Errorf("ruling (-want +got):\n%s", diff)
			}
		})
	}
}

func ptrJ(r JudgeResult) *JudgeResult { return &r }

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{
		`{"verdict":"pass","reason":"r","evidence":"e","score":8}`,
		"prose\n```json\n{\"verdict\":\"fail\",\"reason\":\"x\"}\n```",
		`{"verdict":"pass","evidence":["a","b"],"score":null}`,
		`{{{{"verdict":"pass"}`,
		`{"verdict":"maybe"}`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		v, err := ParseVerdict(answer)
		if err != nil {
			return
		}
		if v.Verdict != "pass" && v.Verdict != "fail" {
			t.Fatalf("accepted verdict %q", v.Verdict)
		}
		if v.Score != nil && (*v.Score < 0 || *v.Score > 10) {
			t.Fatalf("accepted score %v", *v.Score)
		}
		// A pass without evidence never satisfies a check.
		if status, _ := verdictRuling("judge", v, 0); status == Pass && v.Evidence == "" {
			t.Fatalf("pass without evidence ruled a pass: %+v", v)
		}
	})
}
