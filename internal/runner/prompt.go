package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
)

// prompt builds a node's prompt for iteration it. Builders get the goal,
// their instruction, their goals with checks and the last evidence, the
// open stage's guideline, the carried summaries, the history file,
// context files, protected paths and, when stalled, the perturbation
// directive. Judges get the judge contract and never a perturbation.
func (r *run) prompt(it int, n loop.Node, p perturbation) string {
	var b strings.Builder
	if n.Role == loop.RoleJudge {
		r.judgePrompt(&b, it, n)
		return b.String()
	}
	r.builderPrompt(&b, it, n, p)
	return b.String()
}

func (r *run) header(b *strings.Builder, it int, n loop.Node) {
	fmt.Fprintf(b, "# Loop %q, iteration %d of %d: node %q (%s)\n\n", r.cfg.Name, it, r.maxIter, n.Name, n.Role)
	if r.cfg.Objective != "" {
		fmt.Fprintf(b, "## Objective\n\n%s\n\n", r.cfg.Objective)
	}
	if n.Instruction != "" {
		fmt.Fprintf(b, "## Your instruction\n\n%s\n\n", n.Instruction)
	}
}

func (r *run) builderPrompt(b *strings.Builder, it int, n loop.Node, p perturbation) {
	r.header(b, it, n)
	b.WriteString("You are a builder in a loop run by loop-action. Change the workspace to meet your goals. " +
		"The runner decides whether a goal is met by running its checks itself after this step: " +
		"nothing you say counts as evidence, only what the checks measure.\n\n")
	b.WriteString("## Goals you advance\n\n")
	for _, g := range n.Goals {
		r.goalSection(b, g)
	}
	if st := r.openStage(n); st != nil && st.Guideline != "" {
		fmt.Fprintf(b, "## Stage %q\n\n%s\n\n", st.Name, st.Guideline)
	}
	if p.kind != "" {
		fmt.Fprintf(b, "## Change of approach\n\n%s\n\n", p.directive)
	}
	if len(r.cp.Summaries) > 0 {
		b.WriteString("## Recent iterations\n\n")
		for _, s := range r.cp.Summaries {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	if r.isOpenAI(n) { // it reads no files: the context comes with the prompt
		r.lastEdits(b, n)
		r.contextFiles(b)
	} else {
		fmt.Fprintf(b, "## History\n\nEvery earlier attempt of this run is summarised in %s.\n\n", r.history)
		r.contextNames(b)
	}
	if pats := protectedPatterns(r.cfg, r.opts.Root); len(pats) > 0 {
		b.WriteString("## Protected paths\n\nDo not change these; the runner reverts any change and counts it as a failure:\n\n")
		for _, p := range pats {
			fmt.Fprintf(b, "- %s\n", p)
		}
	}
}

// contextNames names the [context] files for a builder that reads them
// itself.
func (r *run) contextNames(b *strings.Builder) {
	if files := r.cfg.Context.Files; len(files) > 0 {
		b.WriteString("## Context files\n\nRead these before you change anything:\n\n")
		for _, f := range files {
			fmt.Fprintf(b, "- %s\n", f)
		}
		b.WriteString("\n")
	}
}

// goalSection describes a goal: its state, each check and the evidence the
// last gate measured.
func (r *run) goalSection(b *strings.Builder, name string) {
	g, _ := r.cfg.Goal(name)
	v, measured := r.lastVerdict(name)
	state := "not measured yet"
	if measured {
		state = string(v.Status())
	}
	fmt.Fprintf(b, "### %s (%s)\n\n", g.Name, state)
	if g.Description != "" {
		fmt.Fprintf(b, "%s\n\n", g.Description)
	}
	for i, ch := range g.Checks {
		fmt.Fprintf(b, "- %s", ch.Describe())
		if measured && i < len(v.Checks) {
			fmt.Fprintf(b, "\n  last result: %s: %s", v.Checks[i].Status, v.Checks[i].Evidence)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func (r *run) lastVerdict(goal string) (gate.Verdict, bool) {
	i := slices.IndexFunc(r.cp.Verdicts, func(v gate.Verdict) bool { return v.Goal == goal })
	if i < 0 {
		return gate.Verdict{}, false
	}
	return r.cp.Verdicts[i], true
}

func (r *run) openStage(n loop.Node) *loop.Stage {
	for i, st := range r.cfg.Stages {
		if st.Name == n.Stage && r.cp.Stages[st.Name] == "open" {
			return &r.cfg.Stages[i]
		}
	}
	return nil
}

// judgeContract is what every judge is asked to end its answer with.
const judgeContract = "End your answer with exactly one JSON object, on its own, in this form:\n\n" +
	"```json\n{\"verdict\": \"pass\" or \"fail\", \"reason\": \"…\", \"evidence\": \"…\", \"score\": 0-10, \"suggested_fix\": \"…\"}\n```\n\n" +
	"A pass needs concrete evidence you checked yourself (files and lines, command output); " +
	"a pass without evidence counts as a fail. An answer without that JSON object is asked again once, then counts as a fail.\n"

func (r *run) judgePrompt(b *strings.Builder, it int, n loop.Node) {
	r.header(b, it, n)
	b.WriteString("You are an independent judge in a loop run by loop-action. Inspect the workspace as it is now " +
		"and rule on the goals below. You do not change anything.\n\n")
	b.WriteString("## Goals you rule on\n\n")
	for _, g := range r.cfg.Goals {
		for _, ch := range g.Checks {
			if ch.Type == loop.CheckJudge && ch.Node == n.Name {
				fmt.Fprintf(b, "### %s\n\n%s\n\n", g.Name, g.Description)
				if ch.MinScore > 0 {
					fmt.Fprintf(b, "A pass needs a score of at least %g.\n\n", ch.MinScore)
				}
				break
			}
		}
	}
	if r.isOpenAI(n) {
		r.contextFiles(b)
	}
	b.WriteString("## Your answer\n\n")
	b.WriteString(judgeContract)
}
