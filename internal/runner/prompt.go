package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// prompter builds the prompts of one iteration's nodes from the run as
// the iteration found it.
type prompter struct {
	cfg      *loop.Config
	cp       *state.Checkpoint
	it       int // the iteration
	maxIter  int
	p        perturbation
	history  string   // the run's history file
	protect  []string // the protected patterns
	refusals map[string]string
	mask     func(string) string
	memory   []state.Memory    // earlier runs' entries (memory.go)
	hasher   *workspace.Hasher // lists the loop root's files, for the [context] files
	ctx      context.Context   // of that walk
	root     string
	logf     func(format string, args ...any)
}

// prompts is the prompter of iteration it, perturbed by p.
func (r *run) prompts(it int, p perturbation) prompter {
	return prompter{cfg: r.cfg, cp: r.cp, it: it, maxIter: r.maxIter, p: p, history: r.history,
		protect: protectedPatterns(r.cfg, r.opts.Root), refusals: r.refusals, mask: r.mask,
		memory: r.memory, hasher: r.hasher, ctx: r.ctx, root: r.opts.Root, logf: r.logf}
}

// prompt builds a node's prompt. Builders get the goal,
// their instruction, their goals with checks and the last evidence, the
// open stage's guideline, the carried summaries, the history file,
// context files, protected paths and, when stalled, the perturbation
// directive. Judges get the judge contract and never a perturbation.
func (r prompter) prompt(n loop.Node) string {
	var b strings.Builder
	if n.Role == loop.RoleJudge {
		r.judgePrompt(&b, n)
		return b.String()
	}
	r.builderPrompt(&b, n)
	return b.String()
}

func (r prompter) header(b *strings.Builder, n loop.Node) {
	fmt.Fprintf(b, "# Loop %q, iteration %d of %d: node %q (%s)\n\n", r.cfg.Name, r.it, r.maxIter, n.Name, n.Role)
	if r.cfg.Objective != "" {
		fmt.Fprintf(b, "## Objective\n\n%s\n\n", r.cfg.Objective)
	}
	if n.Instruction != "" {
		fmt.Fprintf(b, "## Your instruction\n\n%s\n\n", n.Instruction)
	}
}

func (r prompter) builderPrompt(b *strings.Builder, n loop.Node) {
	r.header(b, n)
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
	if r.p.kind != "" {
		fmt.Fprintf(b, "## Change of approach\n\n%s\n\n", r.p.directive)
	}
	if len(r.cp.Summaries) > 0 {
		b.WriteString("## Recent iterations\n\n")
		for _, s := range r.cp.Summaries {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	r.memorySection(b, n)
	if isOpenAI(r.cfg, n) { // it reads no files: the context comes with the prompt
		r.lastEdits(b, n)
		r.contextFiles(b)
	} else {
		fmt.Fprintf(b, "## History\n\nEvery earlier attempt of this run is summarised in %s.\n\n", r.history)
		r.contextNames(b)
	}
	if pats := r.protect; len(pats) > 0 {
		b.WriteString("## Protected paths\n\nDo not change these; the runner reverts any change and counts it as a failure:\n\n")
		for _, p := range pats {
			fmt.Fprintf(b, "- %s\n", p)
		}
	}
}

// contextNames names the [context] files for a builder that reads them
// itself.
func (r prompter) contextNames(b *strings.Builder) {
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
func (r prompter) goalSection(b *strings.Builder, name string) {
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

func (r prompter) lastVerdict(goal string) (gate.Verdict, bool) {
	return verdictOf(r.cp.Verdicts, goal)
}

func (r prompter) openStage(n loop.Node) *loop.Stage {
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

func (r prompter) judgePrompt(b *strings.Builder, n loop.Node) {
	r.header(b, n)
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
	if isOpenAI(r.cfg, n) {
		r.contextFiles(b)
	}
	b.WriteString("## Your answer\n\n")
	b.WriteString(judgeContract)
}

// lastEdits tells an openai builder why its last reply's edits were not
// applied: it cannot see the workspace, so this is how it learns.
func (r prompter) lastEdits(b *strings.Builder, n loop.Node) {
	why := r.refusals[n.Name]
	if why == "" {
		return
	}
	fmt.Fprintf(b, "## Your last reply's edits\n\nNothing of your last reply was applied: %s\n\n", masked(r.mask, why))
}

// contextFiles writes the contents of the [context] files into an openai
// node's prompt, up to ContextCap bytes in all, and says what the cap left
// out. Files are read through workspace.Writer: never through a symbolic
// link, never from .git or .loop.
func (r prompter) contextFiles(b *strings.Builder) {
	pats := r.cfg.Context.Files
	if len(pats) == 0 {
		return
	}
	names, err := r.hasher.Files(r.ctx)
	if err != nil {
		r.logf("context files: %v", err)
		return
	}
	w, err := workspace.OpenWriter(r.root)
	if err != nil {
		r.logf("context files: %v", err)
		return
	}
	defer w.Close()
	var shown, left []string
	used := 0
	var body strings.Builder
	for _, name := range matching(names, pats) {
		e, ok, err := w.Lookup(name)
		if err != nil || !ok || !e.Mode.IsRegular() || e.Data == nil {
			continue
		}
		if used+len(e.Data) > ContextCap {
			left = append(left, name)
			continue
		}
		used += len(e.Data)
		shown = append(shown, name)
		fmt.Fprintf(&body, "%s\n````\n%s\n````\n\n", name, strings.TrimSuffix(string(e.Data), "\n"))
	}
	fmt.Fprintf(b, "## Context files\n\n%d files, %d bytes (at most %d bytes are shown).\n\n", len(shown), used, ContextCap)
	b.WriteString(body.String())
	if len(left) > 0 {
		fmt.Fprintf(b, "Not shown, past the cap: %s\n\n", strings.Join(left, ", "))
		r.logf("context files past the cap of %d bytes, not shown: %s", ContextCap, strings.Join(left, ", "))
	}
}
