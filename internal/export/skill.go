package export

import (
	"cmp"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/process"
)

// maxDescription is the longest description the Agent Skills format allows.
const maxDescription = 1024

// skillMarkdown renders SKILL.md: frontmatter, what the run proved, how to
// reuse the loop, and what the export is not. outFiles is how many files
// out/ holds, withheld how many files were left out.
func skillMarkdown(in Input, outFiles, withheld int) []byte {
	var b strings.Builder
	cfg := in.Config
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\nrun_id: %s\ncommit: %s\nfinished: %s\n---\n\n",
		yamlString(DirName(cfg.Name)), yamlString(description(cfg)), yamlString(in.RunID),
		yamlString(in.Commit), yamlString(in.Finished.UTC().Format(time.RFC3339)))
	fmt.Fprintf(&b, "# %s: a loop that converged\n\n", code(cfg.Name))
	fmt.Fprintf(&b, "This is the success export of the loop %s. Run %s, from commit %s, succeeded at %s after %s: "+
		"loop-action's deterministic gate ruled it a success from evidence the runner measured itself.\n\n",
		code(cfg.Name), orUnknown(in.RunID), orUnknown(in.Commit), in.Finished.UTC().Format(time.RFC3339),
		phrase.Plural(len(in.History), "iteration", "iterations"))
	if strings.TrimSpace(cfg.Objective) != "" {
		b.WriteString("The loop's objective:\n\n" + quoteBlock(cfg.Objective) + "\n")
	}
	writeProved(&b, in)
	writeReuse(&b, in, outFiles, withheld)
	writeNot(&b, in)
	return []byte(b.String())
}

// description is the frontmatter description: the objective on one line.
func description(cfg *loop.Config) string {
	if d := phrase.Line(cfg.Objective, maxDescription); d != "" {
		return d
	}
	return phrase.Line(fmt.Sprintf("The loop %s, as it converged, with the evidence of its success.", cfg.Name), maxDescription)
}

func writeProved(b *strings.Builder, in Input) {
	fmt.Fprintf(b, "## What it proved\n\nWhen the final gate ran, on workspace snapshot %s, the blocking goals stood as follows.\n\n", orUnknown(in.Snapshot))
	verdicts := byGoal(in.Verdicts)
	for _, g := range in.Config.Goals {
		if !g.IsBlocking() {
			continue
		}
		v, ok := verdicts[g.Name]
		writeGoalHeading(b, g, v, ok)
		if ok && !v.Satisfied {
			fmt.Fprintf(b, "Not satisfied at the end: [success] min_pass_rate = %s let the run succeed without it.\n\n",
				number(in.Config.Success.MinPassRate))
		}
		for i, ch := range g.Checks {
			st := gate.Fail
			if ok && i < len(v.Checks) {
				st = v.Checks[i].Status
			}
			b.WriteString(listItem(fmt.Sprintf("%s %s: %s", st.Icon(), code(ch.Type), describeCheck(ch))))
		}
		b.WriteString("\n")
	}
	b.WriteString("The evidence line of every check is in [EVIDENCE.md](EVIDENCE.md).\n\n")
}

// writeGoalHeading writes a goal's heading: its status, name and description.
func writeGoalHeading(b *strings.Builder, g loop.Goal, v gate.Verdict, ok bool) {
	st := gate.Fail
	if ok {
		st = v.Status()
	}
	fmt.Fprintf(b, "### %s %s", st.Icon(), code(g.Name))
	if d := phrase.OneLine(g.Description); d != "" {
		b.WriteString(": " + d)
	}
	b.WriteString("\n\n")
	if !ok {
		b.WriteString("No verdict was recorded for this goal.\n\n")
	}
}

// byGoal indexes verdicts by goal name.
func byGoal(vs []gate.Verdict) map[string]gate.Verdict {
	m := make(map[string]gate.Verdict, len(vs))
	for _, v := range vs {
		m[v.Goal] = v
	}
	return m
}

// describeCheck says what a check measures, from the config.
func describeCheck(ch loop.Check) string {
	switch {
	case ch.IsCommand():
		return fmt.Sprintf("%s exits %d", code(cmp.Or(ch.Run, process.Quote(ch.Argv))), ch.ExpectExit)
	case ch.Type == loop.CheckFileExists && ch.NonEmpty:
		return code(ch.Path) + " exists and is not empty"
	case ch.Type == loop.CheckFileExists:
		return code(ch.Path) + " exists"
	case ch.Type == loop.CheckRegex:
		return fmt.Sprintf("%s matches %s", code(ch.Path), code(ch.Pattern))
	case ch.Type == loop.CheckMetric:
		return fmt.Sprintf("metric %s %s %s", code(ch.Name), ch.Op, number(ch.Value))
	case ch.Type == loop.CheckJudge && ch.MinScore > 0:
		return fmt.Sprintf("judge node %s rules pass, with a score of at least %s", code(ch.Node), number(ch.MinScore))
	case ch.Type == loop.CheckJudge:
		return fmt.Sprintf("judge node %s rules pass", code(ch.Node))
	case ch.Type == loop.CheckManual:
		return fmt.Sprintf("an authorised person approved the reviewed snapshot: %s", strconv.Quote(phrase.OneLine(ch.Prompt)))
	}
	return "unknown check type"
}

// reuseText explains run.sh and run.cmd.
//
//go:embed reuse.md
var reuseText string

func writeReuse(b *strings.Builder, in Input, outFiles, withheld int) {
	b.WriteString(reuseText)
	version := ""
	if in.Version != "" {
		version = "; this export was written by loop-action " + code(in.Version)
	}
	b.WriteString(listItem("`loop-action` on PATH, for example from `go install github.com/loop-action/loop-action/cmd/loop-action@latest`" + version + "."))
	if cmds := agentCommands(in.Config); len(cmds) > 0 {
		b.WriteString(listItem("the agent commands its providers run, on PATH: " + codeList(cmds) + "."))
	}
	if vars := envNames(in.Config); len(vars) > 0 {
		b.WriteString(listItem("the environment variables its providers require: " + codeList(vars) +
			". Only their names are recorded here, never their values."))
	} else {
		b.WriteString(listItem("no environment variables: its providers require none."))
	}
	fmt.Fprintf(b, "\n`out/` holds the %s of the loop root that matched `[export] paths`", phrase.Plural(outFiles, "file", "files"))
	if paths := in.Config.Export.Paths; len(paths) > 0 {
		fmt.Fprintf(b, " (%s)", codeList(paths))
	}
	b.WriteString("; `manifest.json` lists the size and sha256 of every file here.")
	if withheld > 0 {
		fmt.Fprintf(b, " %s left out; [EVIDENCE.md](EVIDENCE.md) says which and why.",
			phrase.Plural(withheld, "file was", "files were"))
	}
	b.WriteString("\n\n")
}

// agentCommands lists the programs the providers run (the first word of
// each command), sorted and without repeats.
func agentCommands(cfg *loop.Config) []string {
	var cmds []string
	for _, p := range cfg.Providers {
		if len(p.Command) > 0 && p.Command[0] != "" {
			cmds = append(cmds, p.Command[0])
		}
	}
	slices.Sort(cmds)
	return slices.Compact(cmds)
}

// envNames lists the environment variables the providers require, sorted
// and without repeats. Names only: the export never holds a value.
func envNames(cfg *loop.Config) []string {
	var names []string
	for _, p := range cfg.Providers {
		names = append(names, p.RequiredEnv()...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// codeList renders words as code spans separated by commas.
func codeList(words []string) string {
	spans := make([]string, len(words))
	for i, w := range words {
		spans[i] = code(w)
	}
	return strings.Join(spans, ", ")
}

func writeNot(b *strings.Builder, in Input) {
	b.WriteString("## What it is not\n\n")
	b.WriteString(listItem("Not a guarantee beyond these checks. The gate proved exactly the checks listed above, on one workspace snapshot; " +
		"nothing else about the repository was verified, and a later change can undo any of it."))
	verdicts := byGoal(in.Verdicts)
	var advisory []string
	for _, g := range in.Config.Goals {
		if g.IsBlocking() {
			continue
		}
		state := "no verdict"
		if v, ok := verdicts[g.Name]; ok {
			state = fmt.Sprintf("%s %d/%d checks passed", v.Status().Icon(), v.Passed, v.Total)
		}
		advisory = append(advisory, fmt.Sprintf("%s (%s)", code(g.Name), state))
	}
	if len(advisory) > 0 {
		b.WriteString(listItem("Advisory goals did not decide success, whatever their state: " + strings.Join(advisory, ", ") +
			". Their evidence is in EVIDENCE.md."))
	} else {
		b.WriteString(listItem("There were no advisory goals: every goal of the loop is listed above."))
	}
	b.WriteString(listItem("No node's claims are in it. Nothing an agent said about its own work counts as evidence: " +
		"every line of EVIDENCE.md was measured by the runner and ruled on by the gate."))
}
