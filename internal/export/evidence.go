package export

import (
	"fmt"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/phrase"
)

// measured is the statement EVIDENCE.md makes about every line in it.
const measured = "Every line in this file was measured by the runner (exit codes of commands it ran, files it read, " +
	"metrics it computed, verdicts it parsed from independent judges, recorded human decisions) and ruled on by the " +
	"deterministic gate; no node's claim is included."

// evidenceMarkdown renders EVIDENCE.md: the final verdicts with their
// evidence lines verbatim, the iteration history, the spend, and the files
// the export left out.
func evidenceMarkdown(in Input, withheld []Withheld) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Evidence: %s\n\n", code(in.Config.Name))
	b.WriteString(listItem("run: " + orUnknown(in.RunID)))
	b.WriteString(listItem("commit: " + orUnknown(in.Commit)))
	b.WriteString(listItem("workspace snapshot: " + orUnknown(in.Snapshot)))
	b.WriteString(listItem("finished: " + in.Finished.UTC().Format(time.RFC3339)))
	b.WriteString(listItem("loop-action: " + orUnknown(in.Version)))
	b.WriteString("\n" + measured + "\n\n")
	writeVerdicts(&b, in.Verdicts)
	writeHistory(&b, in.History)
	writeSpend(&b, in)
	writeChanges(&b, in, withheld)
	writeWithheld(&b, withheld)
	return []byte(b.String())
}

func writeVerdicts(b *strings.Builder, vs []gate.Verdict) {
	satisfied, blocking := gate.Blocking(vs)
	fmt.Fprintf(b, "## Final verdicts\n\nOverall: success, with %d of %s satisfied.\n\n", satisfied, phrase.Plural(blocking, "blocking goal", "blocking goals"))
	for _, v := range vs {
		kind := "blocking"
		if !v.Blocking {
			kind = "advisory"
		}
		fmt.Fprintf(b, "### %s %s (%s): %d/%d checks passed\n\n", v.Status().Icon(), code(v.Goal), kind, v.Passed, v.Total)
		for _, c := range v.Checks {
			b.WriteString(listItem(fmt.Sprintf("%s check %d, %s: %s", c.Status.Icon(), c.Index+1, code(c.Type), c.Evidence)))
		}
		b.WriteString("\n")
	}
}

func writeHistory(b *strings.Builder, history []Iteration) {
	b.WriteString("## Iteration history\n\n")
	if len(history) == 0 {
		b.WriteString("No iteration was recorded.\n\n")
		return
	}
	b.WriteString("| iteration | goals satisfied |\n|---:|---:|\n")
	for _, it := range history {
		fmt.Fprintf(b, "| %d | %d/%d |\n", it.N, it.Satisfied, it.Total)
	}
	b.WriteString("\n")
	for _, it := range history {
		fmt.Fprintf(b, "### Iteration %d: %d/%d goals satisfied\n\n", it.N, it.Satisfied, it.Total)
		if strings.TrimSpace(it.Summary) == "" {
			b.WriteString("No summary was recorded.\n\n")
			continue
		}
		b.WriteString(quoteBlock(it.Summary) + "\n")
	}
}

func writeSpend(b *strings.Builder, in Input) {
	tokens := count(in.Spend.Tokens)
	if in.Spend.Estimated {
		tokens += " (some estimated from text length)"
	}
	b.WriteString("## Spend\n\nSummed across every process of the run.\n\n")
	b.WriteString(listItem("iterations: " + fmt.Sprint(len(in.History))))
	b.WriteString(listItem("tokens: " + tokens))
	b.WriteString(listItem("cost: " + dollars(in.Spend.CostUSD)))
	b.WriteString(listItem("wall clock: " + clock(in.Spend.WallClock)))
}

func writeWithheld(b *strings.Builder, withheld []Withheld) {
	if len(withheld) == 0 {
		return
	}
	b.WriteString("\n## Files left out\n\nThe export holds none of these files; manifest.json lists them too.\n\n")
	for _, wh := range withheld {
		from := ""
		if wh.Source != "" {
			from = " (the loop root's " + code(wh.Source) + ")"
		}
		b.WriteString(listItem(code(wh.Path) + from + ": " + wh.Reason + "."))
	}
}
