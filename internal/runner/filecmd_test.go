package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// fileCommands lays out a job as the Actions runner does in a container:
// the workspace beside the file-command directory, each file with what
// earlier steps wrote, and a file outside that must never be written. It
// returns the loop root, the files by variable, and the environment
// naming them.
func fileCommands(t *testing.T) (root string, files map[string]string, env []string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "workspace")
	dir := filepath.Join(base, "file_commands")
	files = map[string]string{
		"GITHUB_ENV":          filepath.Join(dir, "set_env_0b1c"),
		"GITHUB_PATH":         filepath.Join(dir, "add_path_0b1c"),
		"GITHUB_OUTPUT":       filepath.Join(dir, "set_output_0b1c"),
		"GITHUB_STATE":        filepath.Join(dir, "save_state_0b1c"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "step_summary_0b1c"),
	}
	env = []string{"PATH=" + os.Getenv("PATH")}
	for name, p := range files {
		mustWrite(t, p, "EARLIER_"+name+"=1\n")
		env = append(env, name+"="+p)
	}
	mustWrite(t, filepath.Join(root, ".keep"), "")
	mustWrite(t, filepath.Join(base, "victim"), "victim\n")
	return root, files, env
}

func mustWrite(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot reads each file as it is, with its kind.
func snapshot(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, p := range files {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			out[name] = "error: " + err.Error()
		case !fi.Mode().IsRegular():
			out[name] = "not a regular file: " + fi.Mode().String()
		default:
			b, _ := os.ReadFile(p)
			out[name] = string(b)
		}
	}
	return out
}

// TestHostileAgentCannotWriteFileCommands runs the hostile filecmd.sh
// agent, and a check that appends to every file-command file it finds:
// neither sees the variables, and after the run every file holds what it
// held before, with nothing written through the agent's symlink.
func TestHostileAgentCannotWriteFileCommands(t *testing.T) {
	t.Parallel()
	agent, err := filepath.Abs("../../testdata/agents/filecmd.sh")
	if err != nil {
		t.Fatal(err)
	}
	root, files, env := fileCommands(t)
	before := snapshot(t, files)
	src := `name = "filecmd"
[stop]
max_iterations = 2
no_progress = 0
[providers.hostile]
command = ["sh", "` + agent + `"]
[[node]]
name = "hostile"
provider = "hostile"
goals = ["done"]
[[goal]]
name = "done"
  [[goal.check]]
  type = "test"
  run = 'env >> check-env.txt; for f in ../file_commands/*; do echo CHECKED=1 >> "$f"; done; test -e never'
  timeout = "20s"
`
	cfg, err := loop.Parse("loop.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenDir(filepath.Join(root, ".loop", "state"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), Options{Config: cfg, Root: root, RunID: "filecmd/run", Store: store, Env: env})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Status != state.IterationCap || out.Iteration != 2 {
		t.Fatalf("outcome %s after %d iterations, want iteration-cap after 2", out.Status, out.Iteration)
	}
	if diff := cmp.Diff(before, snapshot(t, files)); diff != "" {
		t.Errorf("the file-command files changed (-before +after):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(root), "victim")); string(b) != "victim\n" {
		t.Errorf("the file behind the agent's symlink was written: %q", b)
	}
	for _, f := range []string{"seen.txt", "check-env.txt"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatalf("%s: %v (did the agent and the check run?)", f, err)
		}
		for name := range files {
			if strings.Contains(string(b), name+"=") {
				t.Errorf("%s: a child saw %s:\n%s", f, name, b)
			}
		}
	}
}

// TestRestoreFileCommands tampers with the files in every way a process
// can and checks that Restore puts each back, or refuses.
func TestRestoreFileCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tamper  func(t *testing.T, path, outside string)
		absent  bool   // the file does not exist when guarded
		wantErr string // a substring of Restore's error
	}{
		{name: "append", tamper: func(t *testing.T, p, _ string) { appendTo(t, p, "BASH_ENV=pwn.sh\n") }},
		{name: "overwrite in place", tamper: func(t *testing.T, p, _ string) { overwriteAt0(t, p, "EVIL") }},
		{name: "truncate", tamper: func(t *testing.T, p, _ string) { must(t, os.Truncate(p, 0)) }},
		{name: "delete", tamper: func(t *testing.T, p, _ string) { must(t, os.Remove(p)) }},
		{name: "symlink", tamper: func(t *testing.T, p, outside string) {
			must(t, os.Remove(p))
			must(t, os.Symlink(outside, p))
		}},
		{name: "directory", tamper: func(t *testing.T, p, _ string) {
			must(t, os.Remove(p))
			mustWrite(t, filepath.Join(p, "inside"), "x")
		}},
		{name: "chmod", tamper: func(t *testing.T, p, _ string) { must(t, os.Chmod(p, 0o600)) }},
		{name: "created when absent", absent: true, tamper: func(t *testing.T, p, _ string) { mustWrite(t, p, "success=true\n") }},
		{name: "directory replaced", wantErr: "its directory was replaced", tamper: func(t *testing.T, p, _ string) {
			dir := filepath.Dir(p)
			must(t, os.Rename(dir, dir+".old"))
			mustWrite(t, p, "success=true\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			p := filepath.Join(base, "file_commands", "set_output_1")
			outside := filepath.Join(base, "outside")
			mustWrite(t, outside, "outside\n")
			mustWrite(t, filepath.Join(filepath.Dir(p), ".keep"), "")
			if !tt.absent {
				mustWrite(t, p, "earlier=1\n")
			}
			before := snapshot(t, map[string]string{"f": p})
			g, err := GuardFileCommands([]string{"GITHUB_OUTPUT=" + p})
			if err != nil {
				t.Fatal(err)
			}
			tt.tamper(t, p, outside)
			err = g.Restore()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Restore() = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if diff := cmp.Diff(before, snapshot(t, map[string]string{"f": p})); diff != "" {
				t.Errorf("not restored (-before +after):\n%s", diff)
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
			if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
				t.Errorf("Restore wrote through a symlink: %q", b)
			}
		})
	}
}

func TestWithoutFileCommands(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "GITHUB_ENV=/f/env", "GITHUB_PATH=/f/path", "GITHUB_OUTPUT=/f/out",
		"GITHUB_STATE=/f/state", "GITHUB_STEP_SUMMARY=/f/sum", "GITHUB_SHA=abc", "GITHUB_ENVX=1",
		"github_output=/f/lower", "GITHUB_ENV=/f/again"}
	want := []string{"PATH=/bin", "GITHUB_SHA=abc", "GITHUB_ENVX=1"}
	if diff := cmp.Diff(want, WithoutFileCommands(env)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := WithoutFileCommands(nil); got == nil || len(got) != 0 {
		t.Errorf("WithoutFileCommands(nil) = %#v, want an empty, non-nil environment", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func overwriteAt0(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte(s), 0)
	must(t, err)
	must(t, f.Close())
}
