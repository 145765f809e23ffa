package scaffold

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
)

var update = flag.Bool("update", false, "rewrite examples/workflows/host.yml")

// fixtures are repositories of each kind init knows, by the files that
// give them away.
var fixtures = map[string]fstest.MapFS{
	"go":     {"go.mod": file("module example.com/x\n\ngo 1.22\n")},
	"node":   {"package.json": file(`{"scripts": {"test": "node --test"}}`), "package-lock.json": file("{}")},
	"npm":    {"package.json": file(`{"scripts": {"test": "node --test"}}`)},
	"pnpm":   {"package.json": file(`{"scripts": {"test": "vitest"}}`), "pnpm-lock.yaml": file("")},
	"python": {"pyproject.toml": file("[project]\nname = \"x\"\n")},
	"rust":   {"Cargo.toml": file("[package]\nname = \"x\"\n")},
	"make":   {"Makefile": file("all:\n\ttrue\ntest: all\n\t./run-tests\n")},
	"mixed":  {"go.mod": file("module m\n"), "package.json": file(`{"scripts":{"test":"jest"}}`), "yarn.lock": file(""), "Makefile": file("test:\n\tgo test ./...\n")},
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestDetect(t *testing.T) {
	want := map[string][]string{
		"go": {"go test ./..."}, "node": {"npm test"}, "npm": {"npm test"}, "pnpm": {"pnpm test"}, "python": {"python -m pytest"},
		"rust": {"cargo test"}, "make": {"make test"}, "mixed": {"go test ./...", "yarn test"},
	}
	for name, fsys := range fixtures {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, s := range Detect(fsys) {
				got = append(got, s.Test)
			}
			if diff := cmp.Diff(want[name], got); diff != "" {
				t.Errorf("test commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetectIgnoresWhatIsNoTestSuite(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"npm's placeholder":   {"package.json": file(`{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`)},
		"no test script":      {"package.json": file(`{"scripts":{"build":"tsc"}}`)},
		"broken package.json": {"package.json": file(`{"scripts":`)},
		"a directory go.mod":  {"go.mod/x": file("")},
		"make without test":   {"Makefile": file("testing:\n\ttrue\nTEST := 1\ntest_x:\n")},
		"make variable":       {"Makefile": file("test := 1\ntest= 2\n")},
		"empty":               {},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Detect(fsys); len(got) != 0 {
				t.Errorf("Detect = %+v, want nothing", got)
			}
		})
	}
}

// TestRenderedFilesAreValid renders every template for every fixture and
// loads the config as a run would; actionlint checks the workflow when it
// is installed (.ci/run installs it).
func TestRenderedFilesAreValid(t *testing.T) {
	lint := actionlint(t)
	for _, tmpl := range Templates {
		for name, fsys := range fixtures {
			t.Run(tmpl+"/"+name, func(t *testing.T) {
				files, err := Render(Options{Template: tmpl, Name: "loop", Preset: DefaultPreset, Stacks: Detect(fsys)})
				if err != nil {
					t.Fatal(err)
				}
				dir := write(t, files)
				cfg, err := loop.Load(filepath.Join(dir, ConfigPath))
				if err != nil {
					t.Fatalf("the config does not load:\n%v\n%s", err, files[0].Content)
				}
				if len(cfg.Warnings) > 0 {
					t.Errorf("warnings: %v", cfg.Warnings)
				}
				if lint != "" {
					runActionlint(t, lint, filepath.Join(dir, WorkflowPath))
				}
			})
		}
	}
}

func write(t *testing.T, files []File) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// actionlint finds the actionlint binary on PATH or in GOPATH/bin.
func actionlint(t *testing.T) string {
	if p, err := exec.LookPath("actionlint"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "actionlint")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Log("actionlint is not installed: the workflows are not linted here (.ci/run installs it)")
	return ""
}

func runActionlint(t *testing.T, bin, workflow string) {
	t.Helper()
	cmd := exec.Command(bin, "-no-color", "-shellcheck=", "-pyflakes=", workflow)
	if out, err := cmd.CombinedOutput(); err != nil {
		data, _ := os.ReadFile(workflow)
		t.Errorf("actionlint: %v\n%s\n%s", err, out, data)
	}
}

func TestRenderRefuses(t *testing.T) {
	stacks := Detect(fixtures["go"])
	for name, o := range map[string]Options{
		"unknown template": {Template: "x", Name: "loop", Preset: DefaultPreset, Stacks: stacks},
		"unknown preset":   {Template: "pr-fixer", Name: "loop", Preset: "gpt", Stacks: stacks},
		"bad name":         {Template: "pr-fixer", Name: "a b", Preset: DefaultPreset, Stacks: stacks},
		"no tests":         {Template: "gate-only", Name: "loop"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Render(o); err == nil {
				t.Error("Render accepted it")
			}
		})
	}
}

// TestTestCommandsAreQuoted renders a test command with every character
// TOML must escape: the config still loads and runs that exact command.
func TestTestCommandsAreQuoted(t *testing.T) {
	cmd := "echo \"a\\b\" 'c'\t$HOME \x01 é"
	files, err := Render(Options{Template: "gate-only", Name: "loop", Tests: []string{cmd}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loop.Load(filepath.Join(write(t, files), ConfigPath))
	if err != nil {
		t.Fatalf("%v\n%s", err, files[0].Content)
	}
	if got := cfg.Goals[0].Checks[0].Run; got != cmd {
		t.Errorf("run = %q, want %q", got, cmd)
	}
}

// TestExampleHostWorkflowIsInitsOutput keeps examples/workflows/host.yml
// what init writes for a Go repository (go test -update rewrites it), so
// the example actionlint checks in .ci/run is init's own output.
func TestExampleHostWorkflowIsInitsOutput(t *testing.T) {
	files, err := Render(Options{Template: "pr-fixer", Name: "demo", Preset: DefaultPreset, Stacks: Detect(fixtures["go"])})
	if err != nil {
		t.Fatal(err)
	}
	const example = "../../examples/workflows/host.yml"
	if *update {
		if err := os.WriteFile(example, files[1].Content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(files[1].Content)); diff != "" {
		t.Errorf("%s is not init's output (-file +init; go test -update rewrites it):\n%s", example, diff)
	}
}

// TestAgentsAreThePresets: init offers exactly the loop's presets, and the
// secret each workflow passes is one the preset's CLI reads its key from.
func TestAgentsAreThePresets(t *testing.T) {
	if diff := cmp.Diff(loop.PresetNames(), Presets()); diff != "" {
		t.Errorf("init's agents (-loop presets +init):\n%s", diff)
	}
	for name, a := range Agents {
		cfg, err := loop.Parse("loop.toml", []byte("name = \"x\"\n[providers.agent]\npreset = \""+name+"\"\n[[node]]\nname = \"n\"\nprovider = \"agent\"\n[[goal]]\nname = \"g\"\n[[goal.check]]\ntype = \"test\"\nrun = \"true\"\n"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, env := range a.Env {
			if !slices.Contains(cfg.Providers["agent"].OptionalEnv, env) {
				t.Errorf("%s: the workflow passes %s, which the preset does not read (%v)", name, env, cfg.Providers["agent"].OptionalEnv)
			}
		}
	}
}
