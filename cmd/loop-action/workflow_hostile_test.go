//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/scaffold"
)

// TestWorkflowsRunNoForkCodeBeforeAuthorization: a fork's pull request
// whose package.json has a preinstall script and whose pyproject.toml
// names an in-tree build backend, each writing a marker when run; then a
// /loop status from a stranger and a /loop run from a writer. In the
// workflow init writes the authorize job refuses both (a fork's comments
// never proceed), the loop job does not run, and no marker exists. The
// workflow init wrote before the authorize job (testdata) ran npm install
// and pip on the fork's head for each, in a job holding the agent's key
// and write tokens: there the markers are written, so the test sees it.
func TestWorkflowsRunNoForkCodeBeforeAuthorization(t *testing.T) {
	if testing.Short() {
		t.Skip("runs workflows")
	}
	t.Parallel()
	for _, need := range []func() error{tools("node", "npm"), pythonWorks} {
		if err := need(); err != nil {
			t.Skipf("cannot run the setup steps here: %v", err)
		}
	}
	for _, c := range []struct {
		name     string
		workflow string // "" is what init writes
		ran      bool
	}{
		{"init's workflow", "", false},
		{"before the authorize job", "testdata/workflows/pr-fixer-before-authorize.yml", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
			defer cancel()
			w := newWFWorld(t)
			main := w.seed(map[string]string{"package.json": nodePkg, "calc.js": nodeCalc, "calc.test.js": nodeTest,
				"pyproject.toml": "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n"}, "pr-fixer")
			markers := map[string]string{"npm's preinstall": filepath.Join(t.TempDir(), "npm-ran"), "pip's build backend": filepath.Join(t.TempDir(), "pip-ran")}
			fork := w.commit(main, fmt.Sprintf("refs/pull/%d/head", prNumber), map[string]string{
				"package.json": fmt.Sprintf(`{"name": "calc", "version": "1.0.0", "scripts": {"preinstall": "touch %s", "test": "node --test"}}`, markers["npm's preinstall"]),
				"pyproject.toml": "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n\n" +
					"[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.setuptools]\npy-modules = [\"calc\"]\n",
				"backend.py": fmt.Sprintf("import pathlib\npathlib.Path(%q).touch()\nfrom setuptools.build_meta import *\n", markers["pip's build backend"]),
			}, "a fork's change")
			w.openPR(fork, "mallory/demo")
			file := c.workflow
			if file == "" {
				file = filepath.Join(w.dir, "seed", scaffold.WorkflowPath)
			}
			for _, ev := range []ghEvent{w.commentEvent("stranger", "/loop status"), w.commentEvent("writer", "/loop run")} {
				e := w.emulator(file)
				runs := e.run(ctx, ev)
				if !c.ran {
					if a := runs["authorize"]; a == nil || a.result != "success" || a.outputs["proceed"] == "true" {
						t.Errorf("%s by %s: authorize %+v, want it to refuse\n%s", ev.payload["comment"].(map[string]any)["body"], ev.actor, a, e.log)
					}
					if l := runs["loop"]; l == nil || l.result != "skipped" {
						t.Errorf("%s by %s: the loop job was not skipped: %+v\n%s", ev.payload["comment"].(map[string]any)["body"], ev.actor, l, e.log)
					}
				}
				for what, m := range markers {
					_, err := os.Stat(m)
					if ran := err == nil; ran != c.ran {
						t.Errorf("%s by %s: %s ran: %v, want %v\n%s", ev.payload["comment"].(map[string]any)["body"], ev.actor, what, ran, c.ran, e.log)
					}
					_ = os.Remove(m)
				}
			}
		})
	}
}
