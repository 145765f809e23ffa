package action

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// Point is the state of the checks after one iteration.
type Point struct {
	Iteration int
	Passed    int // checks passing
	Checks    int // checks in all
}

// Report is what the sticky comment and the job summary show.
type Report struct {
	Loop          string
	RunID         string
	Status        state.Status
	Success       bool // the gate's overall success; what a gate-only report shows
	Detail        string
	Iteration     int
	MaxIterations int
	Spend         state.Spend
	ByProvider    map[string]ProviderSpend // the spend by provider (the spend output)
	Verdicts      []gate.Verdict
	History       []Point
	Notice        string // said first, e.g. that a fork PR only gets a gate-only evaluation
	SummaryURL    string // where the full report is (the job's run page)
	ExportPath    string
	ArtifactURL   string
	Delivery      []string // where the work went: Markdown of trusted text
	Diff          string   // the certified change, when it was posted instead of pushed
	Apply         string   // the command that applies Diff's change to a clone
}

// Marker is the hidden first line that identifies a loop's sticky comment.
func Marker(loop string) string { return fmt.Sprintf("<!-- loop-action:sticky loop=%s -->", loop) }

// Limits on the size of a rendered report.
const (
	CommentLimit = 65536   // characters GitHub accepts in a comment body
	SummaryLimit = 1 << 20 // bytes of a job summary
)

// Markdown renders the report, with the sticky marker first, cut to fit in
// limit characters; a cut report ends by pointing at the full one.
func (r Report) Markdown(limit int) string {
	var b, end strings.Builder
	b.WriteString(Marker(r.Loop) + "\n")
	r.header(&b)
	r.delivery(&b)
	r.goals(&b)
	r.failing(&b)
	r.reviews(&b)
	r.chart(&b)
	r.footer(&end)
	r.diff(&b, limit-utf8.RuneCountInString(b.String())-utf8.RuneCountInString(end.String()))
	return fit(b.String()+end.String(), limit, r.SummaryURL)
}

func (r Report) header(b *strings.Builder) {
	fmt.Fprintf(b, "## %s loop `%s`: %s\n\n", r.icon(), r.Loop, r.title())
	if r.Notice != "" {
		fmt.Fprintf(b, "> [!NOTE]\n> %s\n\n", r.Notice)
	}
	if r.Status == runner.GateOnly { // no run: no iterations, no spend
		return
	}
	if r.Detail != "" {
		fmt.Fprintf(b, "%s\n\n", codeSpan(r.Detail, maxEvidence))
	}
	fmt.Fprintf(b, "Run `%s` · iteration %d of %d · %d tokens%s · $%.2f · %s\n\n",
		r.RunID, r.Iteration, r.MaxIterations, r.Spend.Tokens, estimated(r.Spend), r.Spend.CostUSD, r.Spend.WallClock.Round(1e9))
}

// title is how the run stands: its status, or for a gate-only evaluation
// whether the gate holds.
func (r Report) title() string {
	switch {
	case r.Status != runner.GateOnly:
		return string(r.Status)
	case r.Success:
		return "gate-only, the gate holds"
	}
	return "gate-only, the gate does not hold"
}

func (r Report) icon() string {
	if r.Status == runner.GateOnly && r.Success {
		return "✅"
	}
	return statusIcon(r.Status)
}

func statusIcon(s state.Status) string {
	switch s {
	case state.Success:
		return "✅"
	case state.AwaitingReview:
		return "⏸"
	case state.Running:
		return "🔄"
	}
	return "❌"
}

func (r Report) goals(b *strings.Builder) {
	b.WriteString("| | goal | checks | |\n|---|---|---|---|\n")
	for _, v := range r.Verdicts {
		fmt.Fprintf(b, "| %s | `%s` | %d/%d | %s |\n", v.Status().Icon(), v.Goal, v.Passed, v.Total, kind(v))
	}
	b.WriteString("\n")
}

// kind says whether a goal is blocking or advisory.
func kind(v gate.Verdict) string {
	if v.Blocking {
		return "blocking"
	}
	return "advisory"
}

// estimated says when some of the spend's tokens were estimated.
func estimated(s state.Spend) string {
	if s.Estimated {
		return " (some estimated)"
	}
	return ""
}

// failing lists each check that does not pass, with its evidence.
func (r Report) failing(b *strings.Builder) {
	var lines []string
	for _, v := range r.Verdicts {
		for _, c := range v.Checks {
			if c.Status == gate.Fail {
				lines = append(lines, fmt.Sprintf("- `%s` %s: %s", v.Goal, c.Type, codeSpan(c.Evidence, maxEvidence)))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("### Failing checks\n\n" + strings.Join(lines, "\n") + "\n\n")
}

// reviews shows each review waiting, with the exact command to approve.
func (r Report) reviews(b *strings.Builder) {
	var lines []string
	for _, v := range r.Verdicts {
		for _, c := range v.Checks {
			if c.ReviewRequested {
				lines = append(lines, fmt.Sprintf("- `%s`: %s  \n  approve with `/loop approve %s`, or reject with `/loop reject %s <reason>`",
					v.Goal, codeSpan(c.Evidence, maxEvidence), v.Goal, v.Goal))
				break
			}
		}
	}
	if len(lines) > 0 {
		b.WriteString("### Reviews wanted\n\n" + strings.Join(lines, "\n") + "\n\n")
	}
}

// chart draws the checks passing per iteration (Mermaid xychart-beta).
func (r Report) chart(b *strings.Builder) {
	if len(r.History) < 2 {
		return
	}
	xs, ys := make([]string, len(r.History)), make([]string, len(r.History))
	top := 1
	for i, p := range r.History {
		xs[i], ys[i] = fmt.Sprint(p.Iteration), fmt.Sprint(p.Passed)
		top = max(top, p.Checks)
	}
	fmt.Fprintf(b, "```mermaid\nxychart-beta\n    title \"Checks passing per iteration\"\n    x-axis [%s]\n    y-axis \"checks\" 0 --> %d\n    line [%s]\n```\n\n",
		strings.Join(xs, ", "), top, strings.Join(ys, ", "))
}

func (r Report) footer(b *strings.Builder) {
	if r.ArtifactURL != "" {
		fmt.Fprintf(b, "Success export: [%s](%s)\n\n", "artifact", r.ArtifactURL)
	} else if r.ExportPath != "" {
		fmt.Fprintf(b, "Success export: `%s`\n\n", r.ExportPath)
	}
	b.WriteString("<sub>Every line above was measured by loop-action's runner; no agent's claim is evidence. `/loop help` lists the commands.</sub>\n")
}

// maxEvidence bounds the characters of one evidence line or stop detail
// in a report; the job summary and the ledger keep them whole.
const maxEvidence = 1000

// escape keeps trusted text (a manual check's question, from the base
// config) from breaking the Markdown around it: no line breaks, no table
// pipes, no HTML. Text an agent or a check could have written goes
// through codeSpan instead.
func escape(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ", "|", "\\|", "<", "&lt;", ">", "&gt;").Replace(s)
}

// fit cuts md to at most limit characters (runes), on a line boundary, and
// says where the full report is.
func fit(md string, limit int, full string) string {
	if utf8.RuneCountInString(md) <= limit {
		return md
	}
	note := "\n\n…cut to fit; the full report is in the job summary"
	if full != "" {
		note += " of [this run](" + full + ")"
	}
	note += ".\n"
	cut, _ := cutLines(md, limit-utf8.RuneCountInString(note))
	cut = strings.TrimSuffix(cut, "\n")
	if strings.Count(cut, "\n```")%2 == 1 { // close a code block cut open
		cut += "\n```"
	}
	return cut + note
}

// delivery says where the run's work went.
func (r Report) delivery(b *strings.Builder) {
	if len(r.Delivery) == 0 {
		return
	}
	b.WriteString("### Delivery\n\n" + strings.Join(r.Delivery, "\n\n") + "\n\n")
}

// diffReserve is what the diff section leaves of a report's room for the
// rest (and for the note that it was cut).
const diffReserve = 600

// diff shows the certified change, collapsed and fenced so that nothing
// in it renders (a fence longer than any run of backticks inside), in at
// most room characters: a longer diff is cut on a line and points at the
// artifact or the run, and the command that applies it follows.
func (r Report) diff(b *strings.Builder, room int) {
	if r.Diff == "" {
		return
	}
	room -= diffReserve + utf8.RuneCountInString(r.Apply)
	patch, cut := cutLines(strings.ToValidUTF8(r.Diff, "\uFFFD"), room)
	fence := phrase.Fence(patch)
	b.WriteString("<details><summary>The certified change</summary>\n\n")
	if patch != "" {
		fmt.Fprintf(b, "%sdiff\n%s\n%s\n\n", fence, strings.TrimSuffix(patch, "\n"), fence)
	}
	if cut {
		where := "the job summary of [this run](" + r.SummaryURL + ")"
		if r.ArtifactURL != "" {
			where = "the success export's [artifact](" + r.ArtifactURL + ")"
		} else if r.SummaryURL == "" {
			where = "the job summary"
		}
		fmt.Fprintf(b, "…cut to fit: the whole change is in %s.\n\n", where)
	}
	b.WriteString("</details>\n\n")
	if r.Apply != "" {
		fmt.Fprintf(b, "Apply it to a clone of this repository with\n\n```sh\n%s\n```\n\n", r.Apply)
	}
}

// cutLines cuts s to at most n characters, on a line boundary.
func cutLines(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	cut := string([]rune(s)[:n])
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i+1]
	}
	return cut, true
}
