package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/ledger"
)

// TestScrubKeepsTheWaveGuardsBaseline: a process left behind that, after
// the wave's guard and before the sweep kills it, rewrites a guarded path
// and plants an ignored file (here: both written when the wave's last
// phase ends) gets neither counted. The scrub removes the ignored file,
// and the measurement still starts from what the wave's guard left, less
// only what the scrub removed — not from a new scan, which would take the
// rewrite for the baseline and run it: the rewrite is put back and the
// measurement is void.
func TestScrubKeepsTheWaveGuardsBaseline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, oneBuilder("sh checks/run.sh"), map[string]Provider{"a": idle(0)})
	h.opts.Env = os.Environ()
	mustWrite(t, filepath.Join(h.root, ".gitignore"), "build/\n")
	run := filepath.Join(h.root, "checks", "run.sh")
	mustWrite(t, run, "exit 1\n")
	h.onStep(func(step string) {
		if step == "published" { // the wave's last step, after its guard
			mustWrite(t, run, "exit 0\n")
			mustWrite(t, filepath.Join(h.root, "build", "planted"), "x\n")
		}
	})
	if out := h.run(context.Background()); out.Success {
		t.Error("the rewrite made after the wave's guard made the run succeed")
	}
	if b, _ := os.ReadFile(run); string(b) != "exit 1\n" {
		t.Errorf("checks/run.sh = %q, want it put back", b)
	}
	var lines []string
	for _, e := range h.events() {
		switch e.Type {
		case ledger.ProtectedReverted, ledger.UncarriedRemoved, ledger.MeasurementVoid:
			lines = append(lines, string(e.Type)+" "+e.Path)
		}
	}
	want := []string{
		string(ledger.UncarriedRemoved) + " build",
		string(ledger.ProtectedReverted) + " checks/run.sh",
		string(ledger.MeasurementVoid) + " ",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
