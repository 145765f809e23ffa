package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/workspace"
)

// TestMeasureOutsideARun: `loop-action gate` and the action's gate-only
// path run checks on code nobody vetted (a fork's, a local branch's), so
// Measure gives them the run's check environment — no file commands, no
// git fsmonitor or hooks — and puts back what a check wrote to the job's
// files. The check here writes every file-command file it can find and
// records what git would run.
func TestMeasureOutsideARun(t *testing.T) {
	t.Parallel()
	root, files, env := fileCommands(t)
	before := snapshot(t, files)
	src := `name = "measure"
[[goal]]
name = "probe"
  [[goal.check]]
  type = "test"
  run = 'env > env.txt; git config --get core.fsmonitor > fsmonitor.txt; git config --get core.hooksPath > hooks.txt; for f in ../file_commands/*; do echo BASH_ENV=/tmp/x >> "$f"; done'
  timeout = "20s"
`
	cfg, err := loop.Parse("loop.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, verdicts, err := Measure(context.Background(), cfg, root, env, workspace.Checkout{})
	if err != nil {
		t.Fatalf("Measure: %v", err)
	}
	if len(verdicts) != 1 || verdicts[0].Checks[0].Status != gate.Pass {
		t.Fatalf("the probe did not run cleanly: %+v", verdicts)
	}
	if diff := cmp.Diff(before, snapshot(t, files)); diff != "" {
		t.Errorf("the file-command files changed (-before +after):\n%s", diff)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	for name := range files {
		if strings.Contains(read("env.txt"), name+"=") {
			t.Errorf("the check saw %s", name)
		}
	}
	if got := read("fsmonitor.txt"); got != "false" {
		t.Errorf("core.fsmonitor in the check = %q, want false", got)
	}
	if got := read("hooks.txt"); got != os.DevNull {
		t.Errorf("core.hooksPath in the check = %q, want %s", got, os.DevNull)
	}
}
