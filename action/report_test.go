package action

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/gate"
	"github.com/loop-action/loop-action/state"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sampleReport() Report {
	return Report{
		Loop: "green-build", RunID: "green-build/pr-12", Status: state.AwaitingReview,
		Detail:    "only human review is left",
		Iteration: 3, MaxIterations: 8,
		Spend: state.Spend{Tokens: 48211, Estimated: true, CostUSD: 0.734, WallClock: 754 * time.Second},
		Verdicts: []gate.Verdict{
			{Goal: "tests", Blocking: true, Satisfied: true, Passed: 2, Total: 2, Checks: []gate.CheckVerdict{
				{Type: "test", Status: gate.Pass, Evidence: "`go test ./...` exited 0 after 4.2s"},
				{Type: "judge", Status: gate.Pass, Evidence: `judge "review" ruled pass (score 8/10): a_test.go:3`}}},
			{Goal: "ui", Blocking: true, Passed: 1, Total: 2, Checks: []gate.CheckVerdict{
				{Type: "build", Status: gate.Pass, Evidence: "`npm run build` exited 0 after 9.1s"},
				{Index: 1, Type: "manual", Status: gate.Pending, ReviewRequested: true, Evidence: "awaiting review of snapshot 3f2a9c1: Does it match the mock?"}}},
			{Goal: "lint", Passed: 0, Total: 1, Checks: []gate.CheckVerdict{
				{Type: "lint", Status: gate.Fail, Evidence: "`golangci-lint run` exited 1 (expected 0) after 2.0s: x.go:3:1: unused | <b>"}}},
		},
		History:    []Point{{0, 1, 5}, {1, 2, 5}, {2, 2, 5}, {3, 3, 5}},
		SummaryURL: "https://github.com/o/r/actions/runs/1",
	}
}

func TestReportMarkdown(t *testing.T) {
	t.Parallel()
	got := sampleReport().Markdown(CommentLimit)
	const golden = "testdata/report.golden.md"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("report differs from %s (-want +got):\n%s", golden, diff)
	}
}

func TestReportFits(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	long := strings.Repeat("é", 500)
	for i := range 400 {
		r.Verdicts = append(r.Verdicts, gate.Verdict{Goal: "g" + string(rune('a'+i%26)), Blocking: true, Total: 1,
			Checks: []gate.CheckVerdict{{Type: "test", Status: gate.Fail, Evidence: long}}})
	}
	md := r.Markdown(CommentLimit)
	if n := utf8.RuneCountInString(md); n > CommentLimit {
		t.Fatalf("report has %d characters, limit %d", n, CommentLimit)
	}
	if !strings.HasPrefix(md, Marker("green-build")) || !strings.Contains(md, "the full report is in the job summary of [this run](https://github.com/o/r/actions/runs/1)") {
		t.Errorf("a cut report must keep the marker and point at the full one; it ends %q", md[len(md)-200:])
	}
	if strings.Count(md, "```")%2 != 0 {
		t.Error("a cut report left a code block open")
	}
}
