//go:build linux

package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRecipesRun runs every workflow of examples/workflows (the recipes
// docs/action.md links) through the workflow emulator on the events it is
// for, as TestWorkflowsRunGreen runs init's: host.yml for a Go repository,
// the container recipes for a Make one, with the container action stood
// in by its entrypoint (the same binary, the same inputs). Green is the
// same: the fix delivered and certified, success on the delivered commit
// only, nothing called again on it; manual-approval.yml pauses for the
// review and finishes on a writer's /loop approve.
func TestRecipesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs workflows")
	}
	t.Parallel()
	kind := func(name string) repoKind {
		i := slices.IndexFunc(repoKinds, func(k repoKind) bool { return k.name == name })
		return repoKinds[i]
	}
	recipes := []struct {
		file     string
		kind     repoKind
		configAs []string
		flow     func(context.Context, *testing.T, *wfWorld, repoKind, string)
	}{
		{"host.yml", kind("go"), nil, prFixerGreen},
		{"pr-fixer.yml", kind("make"), nil, prFixerGreen},
		{"nightly.yml", kind("make"), []string{".github/nightly-loop.toml"}, nightlyGreen},
		{"gate-only.yml", kind("make"), []string{".github/gate.toml"}, gateOnlyGreen},
		{"manual-approval.yml", kind("make"), nil, manualApprovalGreen},
	}
	files, err := filepath.Glob("../../examples/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	var names, tested []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	for _, r := range recipes {
		tested = append(tested, r.file)
		t.Run(r.file, func(t *testing.T) {
			t.Parallel()
			if err := r.kind.needs(); err != nil {
				t.Skipf("cannot run a %s repository here: %v", r.kind.name, err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
			defer cancel()
			w := newWFWorld(t)
			w.configAs = r.configAs
			r.flow(ctx, t, w, r.kind, absPath(t, filepath.Join("../../examples/workflows", r.file)))
		})
	}
	if diff := cmp.Diff(names, slices.Sorted(slices.Values(tested))); diff != "" {
		t.Errorf("examples/workflows and the recipes run (-files +tested):\n%s", diff)
	}
}

// reviewGoal is a manual goal after the tests: a human approves the fix.
const reviewGoal = `
[[goal]]
name = "review"
  [[goal.check]]
  type = "manual"
  prompt = "Does the fix look right?"
`

// manualApprovalGreen: the pull request's run fixes the tests and pauses
// for the review (the job passes); a writer's /loop approve review
// finishes it in the comment's job, which delivers the fix.
func manualApprovalGreen(ctx context.Context, t *testing.T, w *wfWorld, k repoKind, file string) {
	w.configExtra = reviewGoal
	main := w.seed(k.files, "pr-fixer")
	head := w.commit(main, "refs/heads/feature", withBug(k), "a change that breaks add")
	w.openPR(head, "")
	e := w.emulator(file)
	runs := e.run(ctx, w.prEvent("opened", head, ""))
	wantSucceeded(t, e, runs)
	wantHost(t, e, map[string]string{"stop-reason": "awaiting-review", "success": "false"})
	if w.rev("refs/heads/feature") != head || len(w.successes()) != 0 {
		t.Fatalf("a run awaiting review delivered or certified something:\n%s", e.log)
	}
	approve := w.emulator(file)
	runs = approve.run(ctx, w.commentEvent("writer", "/loop approve review"))
	wantSucceeded(t, approve, runs)
	wantHost(t, approve, map[string]string{"stop-reason": "success", "success": "true"})
	delivered := w.rev("refs/heads/feature")
	wantDelivered(t, w, approve, head, delivered, k.source)
	if got := w.successes(); len(got) != 1 || got[0] != delivered {
		t.Errorf("loop/calc success on %v, want the delivered commit %s only", got, delivered)
	}
}
