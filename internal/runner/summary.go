package runner

import (
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// summarize writes the deterministic summary of iteration it: what ran,
// what is newly satisfied, what was REVOKED, what still fails and why,
// stages closed and spend. It is built from measurements only, never from
// what a node said.
func (r *iteration) summarize(d dispatched, ru ruling, closed []string, spentBefore state.Spend) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Iteration %d\n\n", r.n)
	item(&b, "ran", listOr(ranList(d.runs), "nothing"))
	item(&b, "skipped", strings.Join(skipList(d.runs), "; "))
	item(&b, "published from worktrees", strings.Join(d.published, ", "))
	item(&b, "protected paths reverted", strings.Join(d.reverted, ", "))
	item(&b, ".git configuration reverted", strings.Join(d.gitReverted, ", "))
	item(&b, "loop root changes made outside the worktrees reverted", listed(d.rootChanged))
	item(&b, "ignored files removed before measuring (no commit carries them)", listed(r.scrubbed))
	item(&b, "newly satisfied", listOr(ru.newly, "none"))
	item(&b, "REVOKED", strings.Join(ru.revoked, ", "))
	r.failing(&b)
	item(&b, "stages closed", strings.Join(closed, ", "))
	sp := r.cp.Spend
	fmt.Fprintf(&b, "- spend: %s this iteration; %s in all\n", spendText(sp.Tokens-spentBefore.Tokens, sp.CostUSD-spentBefore.CostUSD, sp.Estimated),
		spendText(sp.Tokens, sp.CostUSD, sp.Estimated))
	return b.String()
}

// item writes the summary's line label: what, when there is anything.
func item(b *strings.Builder, label, what string) {
	if what != "" {
		b.WriteString("- " + label + ": " + what + "\n")
	}
}

// failing lists every check of every goal that does not pass, with its
// evidence line.
func (r *iteration) failing(b *strings.Builder) {
	var lines []string
	for gi, v := range r.cp.Verdicts {
		for _, c := range v.Checks {
			if c.Status == gate.Pass {
				continue
			}
			typ := r.cfg.Goals[gi].Checks[c.Index].Type
			lines = append(lines, fmt.Sprintf("  - %s, %s (%s): %s", v.Goal, typ, c.Status, c.Evidence))
		}
	}
	if len(lines) == 0 {
		b.WriteString("- still failing: nothing\n")
		return
	}
	b.WriteString("- still failing:\n" + strings.Join(lines, "\n") + "\n")
}

func ranList(runs []*nodeRun) []string {
	var out []string
	for _, nr := range runs {
		if nr.skip != "" {
			continue
		}
		what := "ok"
		if nr.resp.Err != nil {
			what = "failed: " + failureFacts(nr)
		}
		if nr.node.Role == loop.RoleBuilder {
			out = append(out, fmt.Sprintf("%s (%s tier) %s", nr.node.Name, nr.tier, what))
		} else {
			out = append(out, fmt.Sprintf("%s (judge) %s", nr.node.Name, what))
		}
	}
	return out
}

func skipList(runs []*nodeRun) []string {
	var out []string
	for _, nr := range runs {
		if nr.skip != "" {
			out = append(out, nr.node.Name+": "+nr.skip)
		}
	}
	return out
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}

// failureFacts says how a node failed from what the runner measured
// (exit status, timeout, signal), never from what the node printed: the
// summaries reach EVIDENCE.md, where no node's words may appear.
func failureFacts(nr *nodeRun) string {
	res := nr.resp.Result
	switch {
	case res.StartErr != nil:
		return "could not start"
	case res.TimedOut:
		return "timed out after " + res.Duration.Round(1e8).String()
	case res.Canceled:
		return "stopped with the run"
	case res.Signal != "":
		return "killed by signal " + res.Signal
	case res.ExitCode > 0:
		return fmt.Sprintf("exited %d", res.ExitCode)
	case nr.refused != "":
		return "its edits were not applied (refused, not matching or malformed; the ledger names the files)"
	}
	return "failed"
}

func spendText(tokens int64, usd float64, estimated bool) string {
	est := ""
	if estimated {
		est = " (some estimated)"
	}
	return fmt.Sprintf("%d tokens%s, $%.4f", tokens, est, usd)
}
