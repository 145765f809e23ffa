package action

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
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

// TestReportRendersNothingAnAgentWrote: check output is the agents' to
// shape (a test can print anything), so evidence and the stop detail reach
// the comment and the summary as code: a mention, an image, a link or HTML
// in them shows as text and notifies nobody.
func TestReportRendersNothingAnAgentWrote(t *testing.T) {
	t.Parallel()
	hostile := "`sh test.sh` exited 1: @org/team ![x](https://evil.example/x.png) [y](https://evil.example) <img src=x> ``` \n@admin"
	r := Report{Loop: "l", RunID: "l/pr-1", Status: state.NoProgress, Detail: "node fixer failed: @org/team ![x](https://evil.example/x.png)",
		Verdicts: []gate.Verdict{{Goal: "tests", Blocking: true, Total: 2, Checks: []gate.CheckVerdict{
			{Type: "test", Status: gate.Fail, Evidence: hostile},
			{Index: 1, Type: "manual", Status: gate.Pending, ReviewRequested: true, Evidence: hostile}}}}}
	md := r.Markdown(CommentLimit)
	if outside := outsideCodeSpans(md); strings.Contains(outside, "@") || strings.Contains(outside, "![") ||
		strings.Contains(outside, "<img") || strings.Contains(outside, "](") {
		t.Errorf("agent text renders outside code spans:\n%s\nin:\n%s", outside, md)
	}
}

// outsideCodeSpans is md without its inline code spans (CommonMark: a run
// of n backticks up to the next run of exactly n).
func outsideCodeSpans(md string) string {
	var out strings.Builder
	for i := 0; i < len(md); {
		if md[i] != '`' {
			out.WriteByte(md[i])
			i++
			continue
		}
		n := run(md[i:], '`')
		end := -1
		for j := i + n; j < len(md); {
			if md[j] != '`' {
				j++
				continue
			}
			if m := run(md[j:], '`'); m == n {
				end = j + m
				break
			} else {
				j += m
			}
		}
		if end < 0 {
			out.WriteString(md[i : i+n])
			i += n
			continue
		}
		i = end
	}
	return out.String()
}

// TestReportCutsALongDiff: a diff too long for a comment is cut on a line,
// inside its fence, and points at the artifact; the report stays under the
// limit, the command that applies it follows, and nothing else is cut.
func TestReportCutsALongDiff(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Delivery = []string{"`deliver: comment`: nothing is pushed."}
	r.Diff = strings.Repeat("+a line of the certified change with ``` inside\n", 5000)
	r.Apply = "loop-action apply --run-id green-build/pr-12 --state branch:loop-state --remote https://github.com/o/r.git"
	r.ArtifactURL = "https://github.com/o/r/actions/runs/1/artifacts/2"
	md := r.Markdown(commentLimit)
	if n := utf8.RuneCountInString(md); n > commentLimit {
		t.Fatalf("%d characters, over %d", n, commentLimit)
	}
	for _, want := range []string{"````diff\n+a line", "with ``` inside\n````\n\n…cut to fit: the whole change is in the success export's [artifact](https://github.com/o/r/actions/runs/1/artifacts/2).\n\n</details>",
		"```sh\n" + r.Apply + "\n```", "Every line above was measured"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(md, "…cut to fit; the full report") {
		t.Error("the report itself was cut")
	}
}

// run is the length of the run of ch that starts s.
func run(s string, ch byte) int {
	return len(s) - len(strings.TrimLeft(s, string(ch)))
}
