package action

import (
	"fmt"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// Progress is what the sticky comment shows while a run goes: where it
// stands after its last checkpoint. It certifies nothing; the final
// Report replaces it.
type Progress struct {
	Loop          string
	RunID         string
	Iteration     int // iterations done
	MaxIterations int
	Spend         state.Spend
	Budget        loop.Stop // max_tokens, max_cost_usd, max_wall_clock
	Verdicts      []gate.Verdict
	Ran           [][]string // the nodes the last iteration ran, by wave
	Every         time.Duration
	Updated       time.Time
	SummaryURL    string
}

// Markdown renders the progress, with the sticky marker first, cut to fit
// in limit characters. Evidence is rendered as the final report renders
// it: code spans, so nothing an agent or a check wrote can format, link
// or mention.
func (p Progress) Markdown(limit int) string {
	var b strings.Builder
	b.WriteString(Marker(p.Loop) + "\n")
	fmt.Fprintf(&b, "## %s loop `%s`: in progress, iteration %d of %d\n\n", statusIcon(state.Running), p.Loop, p.Iteration, p.MaxIterations)
	fmt.Fprintf(&b, "> [!NOTE]\n> The run is still going: this comment is updated after its iterations, at most every %s, and certifies nothing. The final report replaces it when the run ends.\n\n", p.Every)
	fmt.Fprintf(&b, "Run `%s` · spent so far: %s\n\n", p.RunID, p.spent())
	p.checklist(&b)
	p.now(&b)
	fmt.Fprintf(&b, "<sub>Updated %s.", p.Updated.UTC().Format("15:04:05 MST"))
	if p.SummaryURL != "" {
		fmt.Fprintf(&b, " The job's log: [this run](%s).", p.SummaryURL)
	}
	b.WriteString("</sub>\n")
	return fit(b.String(), limit, p.SummaryURL)
}

// spent is the spend against each budget.
func (p Progress) spent() string {
	est := estimated(p.Spend)
	tokens := fmt.Sprintf("%d tokens%s", p.Spend.Tokens, est)
	if p.Budget.MaxTokens > 0 {
		tokens = fmt.Sprintf("%d of %d tokens%s", p.Spend.Tokens, p.Budget.MaxTokens, est)
	}
	cost := fmt.Sprintf("$%.4f", p.Spend.CostUSD)
	if p.Budget.MaxCostUSD > 0 {
		cost = fmt.Sprintf("$%.4f of $%.2f", p.Spend.CostUSD, p.Budget.MaxCostUSD)
	}
	wall := fmt.Sprintf("%s wall clock", p.Spend.WallClock.Round(time.Second))
	if p.Budget.MaxWallClock.IsSet() {
		wall = fmt.Sprintf("%s of %s wall clock", p.Spend.WallClock.Round(time.Second), p.Budget.MaxWallClock.Duration)
	}
	return tokens + " · " + cost + " · " + wall
}

// checklist is each goal, checked when the gate holds it satisfied now,
// with each check's current evidence under it.
func (p Progress) checklist(b *strings.Builder) {
	for _, v := range p.Verdicts {
		box := " "
		if v.Satisfied {
			box = "x"
		}
		fmt.Fprintf(b, "- [%s] `%s` (%s) %d/%d\n", box, v.Goal, kind(v), v.Passed, v.Total)
		for _, c := range v.Checks {
			fmt.Fprintf(b, "  - %s %s: %s\n", c.Status.Icon(), c.Type, codeSpan(c.Evidence, maxEvidence))
		}
	}
	b.WriteString("\n")
}

// now says what runs next, and what the last iteration ran.
func (p Progress) now(b *strings.Builder) {
	fmt.Fprintf(b, "Now: iteration %d of %d is starting.", p.Iteration+1, p.MaxIterations)
	if len(p.Ran) > 0 {
		waves := make([]string, len(p.Ran))
		for i, nodes := range p.Ran {
			waves[i] = fmt.Sprintf("wave %d: %s", i+1, verbatimAll(nodes))
		}
		fmt.Fprintf(b, " Iteration %d ran %s.", p.Iteration, strings.Join(waves, "; "))
	}
	b.WriteString("\n\n")
}
