//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// TestHostActionUploadFailureIsAWarning: on GitHub Enterprise Server
// actions/upload-artifact@v4 fails (GHESNotSupportedError) after the run
// succeeded and its outputs were set; the job still passes, with a warning
// that says why and where the export is, and the outputs are intact.
func TestHostActionUploadFailureIsAWarning(t *testing.T) {
	t.Parallel()
	h := newHostRun(t, newRelease(t, "v1.2.3"))
	h.ghes = true
	h.run(t, hostileBound, absPath(t, "../../host"), "v1.2.3", map[string]string{"comment": "false", "deliver": "none"})
	log := h.log()
	if h.failed != "" {
		t.Fatalf("step %q failed, want the job to pass:\n%s", h.failed, log)
	}
	if !strings.Contains(log, "GHESNotSupportedError") {
		t.Fatalf("the upload did not fail as on GHES:\n%s", log)
	}
	want := "::warning title=loop-action::the success export was not uploaded: actions/upload-artifact@v4 is not supported on GitHub Enterprise Server"
	if !strings.Contains(log, want) || !strings.Contains(log, "it is at "+h.outputs["export-path"]) {
		t.Errorf("no warning %q naming the export:\n%s", want, log)
	}
	for k, v := range map[string]string{"success": "true", "stop-reason": "success", "run-id": "host/main", "artifact-url": ""} {
		if h.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, h.outputs[k], v)
		}
	}
	if h.outputs["export-path"] == "" {
		t.Error("output export-path is empty")
	}
}

// TestHostActionCachesTheSourceBuild: a ref without a release is built
// from the action's source on a runner whose go is only in the tool cache
// (the action sets up the Go of its go.mod itself), and cached under a
// hash of that source: a second job with the same source restores the
// binary and builds nothing, not even setting up Go; a changed source
// builds again, with the go on the runner's PATH (no Go set up), and the
// run goes on. (The build of the first job is the one costly step: this
// test is the only one that builds loop-action from source.)
func TestHostActionCachesTheSourceBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds loop-action")
	}
	t.Parallel()
	src := copyActionSource(t)
	rel := newRelease(t, "v1.2.3")
	with := map[string]string{"comment": "false", "deliver": "none", "upload-export": "false"}
	cache := t.TempDir()
	job := func(name string, goOnPath bool) *hostRun {
		h := newHostRun(t, rel)
		h.j.cache = cache
		if !goOnPath {
			h.j.env = withoutGo(t, h.j.env)
		}
		h.run(t, 3*hostileBound, filepath.Join(src, "host"), "main", with)
		if h.failed != "" || h.outputs["success"] != "true" || h.outputs["artifact-url"] != "" {
			t.Fatalf("%s: step %q failed, outputs %v (upload-export false uploads nothing):\n%s", name, h.failed, h.outputs, h.log())
		}
		if log := h.log(); !strings.Contains(log, "no release for 'main': building from source") {
			t.Fatalf("%s: the install did not fall back to the source:\n%s", name, log)
		}
		return h
	}
	built := "built loop-action from this action's source (main)"

	first := job("first job", false).log()
	for _, want := range []string{"--- step 3: Set up Go to build loop-action", built, "cache saved with key: loop-action-linux-"} {
		if !strings.Contains(first, want) {
			t.Errorf("first job: no %q:\n%s", want, first)
		}
	}
	second := job("second job", false).log()
	if !strings.Contains(second, "restored loop-action built from this action's source from the cache") ||
		strings.Contains(second, built) || !strings.Contains(second, "--- skipped: Set up Go to build loop-action") {
		t.Errorf("second job: want the cached binary, no Go set up, no build:\n%s", second)
	}
	f := filepath.Join(src, "cmd", "loop-action", "version.go")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, f, string(b)+"\n// a change to the action's source\n")
	third := job("changed source, go on PATH", true).log()
	if !strings.Contains(third, built) || !strings.Contains(third, "cache not found") ||
		!strings.Contains(third, "--- skipped: Set up Go to build loop-action") {
		t.Errorf("changed source: want a new build with the runner's go, no Go set up:\n%s", third)
	}
}

// copyActionSource copies this repository's files (tracked, and new ones
// not ignored) to a new directory: the action's checkout, as the runner
// downloads it (without .git).
func copyActionSource(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	root := absPath(t, "../..")
	files := strings.Split(strings.TrimRight(gitfake.Git(t, root, "ls-files", "-z", "-co", "--exclude-standard"), "\x00"), "\x00")
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// withoutGo is env with no directory holding go on PATH: a runner whose
// Go is only in the tool cache.
func withoutGo(t *testing.T, env []string) []string {
	t.Helper()
	out := slices.Clone(env)
	for i, kv := range out {
		path, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		dirs := slices.DeleteFunc(filepath.SplitList(path), func(d string) bool {
			_, err := exec.LookPath(filepath.Join(d, "go"))
			return err == nil
		})
		out[i] = "PATH=" + strings.Join(dirs, string(filepath.ListSeparator))
	}
	return out
}
