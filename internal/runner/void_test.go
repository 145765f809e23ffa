package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
)

// TestVoidedSatisfiesNothing: a void measurement fails every check, even
// one that passed or waits for a review, keeps what was measured in the
// evidence, and leaves the verdicts it was given alone.
func TestVoidedSatisfiesNothing(t *testing.T) {
	t.Parallel()
	in := []gate.Verdict{
		{Goal: "tests", Blocking: true, Satisfied: true, Passed: 1, Total: 1,
			Checks: []gate.CheckVerdict{{Index: 0, Type: "test", Status: gate.Pass, Evidence: "`sh test.sh` exited 0"}}},
		{Goal: "ui", Blocking: true, Passed: 1, Total: 2, Checks: []gate.CheckVerdict{
			{Index: 0, Type: "file_exists", Status: gate.Pass, Evidence: "ui.html exists"},
			{Index: 1, Type: "manual", Status: gate.Pending, Evidence: "awaiting review", ReviewRequested: true}}},
	}
	orig := cloneVerdicts(in)
	const why = "test.sh changed while the evidence was collected (put back)"
	want := []gate.Verdict{
		{Goal: "tests", Blocking: true, Total: 1, Checks: []gate.CheckVerdict{
			{Index: 0, Type: "test", Status: gate.Fail, Evidence: "measurement void: " + why + "; measured: `sh test.sh` exited 0"}}},
		{Goal: "ui", Blocking: true, Total: 2, Checks: []gate.CheckVerdict{
			{Index: 0, Type: "file_exists", Status: gate.Fail, Evidence: "measurement void: " + why + "; measured: ui.html exists"},
			{Index: 1, Type: "manual", Status: gate.Fail, Evidence: "measurement void: " + why + "; measured: awaiting review"}}},
	}
	got := voided(in, why)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("voided (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig, in); diff != "" {
		t.Errorf("voided changed its input (-before +after):\n%s", diff)
	}
}

func cloneVerdicts(vs []gate.Verdict) []gate.Verdict {
	out := make([]gate.Verdict, len(vs))
	for i, v := range vs {
		v.Checks = append([]gate.CheckVerdict(nil), v.Checks...)
		out[i] = v
	}
	return out
}

// TestVoidEndsWithItsIteration: what makes one iteration's measurement
// void (here: a guarded path rewritten after the wave's guard, in
// iteration 1 only) does not reach the next iteration, whose measurement
// counts and lets the run succeed. Each iteration starts with nothing of
// the last but its checkpoint.
func TestVoidEndsWithItsIteration(t *testing.T) {
	t.Parallel()
	src := strings.Replace(oneBuilder("test -f done"), "max_iterations = 1", "max_iterations = 3", 1)
	h := newHarness(t, src, map[string]Provider{"a": touch("done", 0)})
	h.opts.Env = os.Environ()
	guarded := filepath.Join(h.root, "checks", "run.sh")
	mustWrite(t, guarded, "exit 1\n")
	rewrites := 0
	h.onStep(func(step string) {
		if step == "published" && rewrites == 0 {
			rewrites++
			mustWrite(t, guarded, "exit 0\n")
		}
	})
	out := h.run(context.Background())
	if !out.Success || out.Iteration != 2 {
		t.Errorf("outcome %s after %d iterations, want success after 2 (%s)", out.Status, out.Iteration, out.Detail)
	}
	var void []int
	for _, e := range h.events() {
		if e.Type == ledger.MeasurementVoid {
			void = append(void, e.Iteration)
		}
	}
	if diff := cmp.Diff([]int{1}, void); diff != "" {
		t.Errorf("void measurements by iteration (-want +got):\n%s", diff)
	}
}
