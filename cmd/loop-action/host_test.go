//go:build linux

package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/artifactfake"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// hostLoop succeeds at iteration 0 (the head already passes) and exports
// a report the repository holds.
const hostLoop = `name = "host"
[stop]
max_iterations = 2
max_wall_clock = "2m"
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "test -s out/report.md"
[export]
paths = ["out/**"]
`

// release is a fake GitHub release of loop-action: the test binary (which
// runs main when called loop-action) as the asset for this machine, and
// checksums.txt, as GoReleaser lays them out.
type release struct {
	repo   string // owner/name; default octo-org/loop-action
	tag    string
	asset  string
	tgz    []byte
	sums   string
	status int // answer to every request when not 0
}

func newRelease(t *testing.T, tag string) *release {
	t.Helper()
	tgz, err := releaseTarball()
	if err != nil {
		t.Fatal(err)
	}
	r := &release{tag: tag, asset: fmt.Sprintf("loop-action_linux_%s.tar.gz", runtime.GOARCH), tgz: tgz}
	r.sums = fmt.Sprintf("%x  loop-action_windows_amd64.zip\n%x  %s\n", sha256.Sum256(nil), sha256.Sum256(r.tgz), r.asset)
	return r
}

// releaseTarball is the asset, made once for every test (the test binary
// is large): stored, not compressed, which is still a gzip stream.
var releaseTarball = sync.OnceValues(func() ([]byte, error) {
	bin, err := shippedBinary()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		data []byte
	}{{"loop-action", bin}, {"README.md", []byte("loop-action\n")}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.data)), ModTime: time.Now()}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})

func (r *release) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	prefix := "/" + or(r.repo, "octo-org/loop-action") + "/releases/download/" + r.tag + "/"
	switch {
	case r.status != 0:
		http.Error(w, "no", r.status)
	case req.URL.Path == prefix+r.asset:
		_, _ = w.Write(r.tgz)
	case req.URL.Path == prefix+"checksums.txt":
		_, _ = w.Write([]byte(r.sums))
	default:
		http.NotFound(w, req)
	}
}

// hostRun is one job that uses host/action.yml on workflow_dispatch.
type hostRun struct {
	w       *actionWorld
	art     *artifactfake.Server
	j       *jobEnv
	token   string
	ghes    bool   // the server is GitHub Enterprise Server: artifacts v4 are refused
	failed  string // the step that failed
	outputs map[string]string
}

func (h *hostRun) log() string { return h.j.log.String() }

func runHost(t *testing.T, rel *release, ref string, with map[string]string) *hostRun {
	t.Helper()
	h := newHostRun(t, rel)
	h.run(t, hostileBound, absPath(t, "../../host"), ref, with)
	return h
}

// newHostRun is the world and the job of a host run, before it runs.
func newHostRun(t *testing.T, rel *release) *hostRun {
	t.Helper()
	token := secretValue(t, "ghs_")
	w := newActionWorldOf(t, token, hostLoop, map[string]http.Handler{"/octo-org/loop-action/releases/": rel})
	writeTestFile(t, filepath.Join(w.workspace, "out", "report.md"), "all good\n")
	gitfake.Git(t, w.workspace, "add", "out/report.md")
	gitfake.Git(t, w.workspace, "commit", "-qm", "report")
	gitfake.Git(t, w.workspace, "push", "-q", "origin", "HEAD:main")
	w.sha = strings.TrimSpace(gitfake.Git(t, w.workspace, "rev-parse", "HEAD"))
	h := &hostRun{w: w, art: artifactfake.New(), token: token}
	t.Cleanup(h.art.Close)
	h.j = &jobEnv{t: t, env: hostEnv(t, w), dir: w.workspace, temp: t.TempDir(), cache: t.TempDir(), log: &strings.Builder{}}
	h.j.uses = h.standIns()
	return h
}

// standIns are the actions host/action.yml uses.
func (h *hostRun) standIns() map[string]standIn {
	return map[string]standIn{
		"actions/upload-artifact@v4": h.uploadArtifact, "actions/setup-go@v5": setupGoStandIn,
		"actions/cache/restore@v4": cacheRestoreStandIn, "actions/cache/save@v4": cacheSaveStandIn,
	}
}

// run runs the host action at dir in h's job, bounded by d.
func (h *hostRun) run(t *testing.T, d time.Duration, dir, ref string, with map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	github := map[string]any{"action_ref": ref, "action_repository": "octo-org/loop-action", "token": h.token}
	runner := map[string]any{"os": "Linux", "arch": h.j.getenv("RUNNER_ARCH"), "temp": h.j.getenv("RUNNER_TEMP")}
	h.outputs, h.failed = runComposite(ctx, h.j, dir, github, runner, with, nil)
}

// hostEnv is the job's environment as the runner gives it to a composite
// action's run steps: the GITHUB_* and RUNNER_* variables, and no INPUT_*
// (a composite action passes its inputs itself).
func hostEnv(t *testing.T, w *actionWorld) []string {
	env := slices.DeleteFunc(w.env(t), func(kv string) bool { return strings.HasPrefix(kv, "INPUT_") })
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	env = append(env, "RUNNER_OS=Linux", "RUNNER_ARCH="+arch, "RUNNER_TEMP="+t.TempDir())
	// Go's caches, as actions/setup-go leaves them for a source build.
	out, err := subprocess.ForTest(t, "go", "env", "GOMODCACHE", "GOCACHE", "GOPROXY", "GOFLAGS").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		env = append(env, []string{"GOMODCACHE", "GOCACHE", "GOPROXY", "GOFLAGS"}[i]+"="+line)
	}
	return env
}

// uploadArtifact stands in for actions/upload-artifact@v4 in h's job.
func (h *hostRun) uploadArtifact(ctx context.Context, j *jobEnv, with map[string]string, env []string) (map[string]string, error) {
	return uploadArtifactStandIn(h.art, h.ghes)(ctx, j, with, env)
}

func absPath(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestHostActionRunsTheLoop runs host/action.yml as a composite action:
// it installs the release for this machine (checksum verified), runs
// `loop-action action` on the runner with the inputs it was given, and
// uploads the success export with actions/upload-artifact.
func TestHostActionRunsTheLoop(t *testing.T) {
	t.Parallel()
	rel := newRelease(t, "v1.2.3")
	h := runHost(t, rel, "v1.2.3", map[string]string{"comment": "false", "deliver": "none"})
	log := h.log()
	if h.failed != "" {
		t.Fatalf("step %q failed:\n%s", h.failed, log)
	}
	if !strings.Contains(log, "installed loop-action v1.2.3 (linux/"+runtime.GOARCH+") from its release, checksum verified") {
		t.Errorf("the release was not installed:\n%s", log)
	}
	want := map[string]string{"success": "true", "stop-reason": "success", "run-id": "host/main"}
	for k, v := range want {
		if h.outputs[k] != v {
			t.Errorf("output %s = %q, want %q\n%s", k, h.outputs[k], v, log)
		}
	}
	if h.outputs["export-path"] == "" || h.outputs["artifact-url"] == "" {
		t.Fatalf("no export uploaded: outputs %v\n%s", h.outputs, log)
	}
	name := filepath.Base(h.outputs["export-path"])
	blob, ok := h.art.Artifact(name)
	if !ok {
		t.Fatalf("the artifact fake holds no artifact %q", name)
	}
	zr, err := zip.NewReader(bytes.NewReader(blob), int64(len(blob)))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range zr.File {
		files = append(files, f.Name)
	}
	if !slices.Contains(files, "out/report.md") {
		t.Errorf("the uploaded export holds %v, no out/report.md", files)
	}
	// The runner consumes ::add-mask:: lines; nothing else may carry it.
	for line := range strings.Lines(log) {
		if !strings.HasPrefix(line, "::add-mask::") && strings.Contains(line, h.token) {
			t.Errorf("the token is in the job log: %s", line)
		}
	}
}

// TestHostActionRefusesABadChecksum: an asset whose checksum does not
// match is never run, and auto never falls back to building it instead.
func TestHostActionRefusesABadChecksum(t *testing.T) {
	t.Parallel()
	rel := newRelease(t, "v1.2.3")
	rel.sums = strings.Replace(rel.sums, fmt.Sprintf("%x", sha256.Sum256(rel.tgz)), fmt.Sprintf("%x", sha256.Sum256([]byte("x"))), 1)
	h := runHost(t, rel, "v1.2.3", nil)
	log := h.log()
	if h.failed != "Install loop-action" || !strings.Contains(log, "checksum mismatch for "+rel.asset) {
		t.Fatalf("failed step %q, want the install to fail on the checksum:\n%s", h.failed, log)
	}
	if strings.Contains(log, "--- step 2") || strings.Contains(log, "building from source") {
		t.Errorf("something ran after a bad checksum:\n%s", log)
	}
}

// TestHostActionInstallModes: release needs the asset; auto builds from
// this checkout only when the ref has no release (404), never when the
// download failed otherwise.
func TestHostActionInstallModes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, ref, install string
		status             int
		failed, logs       string
	}{
		{"release without a release", "main", "release", 0, "Install loop-action", "no release asset"},
		{"auto, server error", "v1.2.3", "auto", http.StatusBadGateway, "Install loop-action", "HTTP 502"},
		{"bad install input", "v1.2.3", "latest", 0, "Install loop-action", "install must be release, source or auto"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rel := newRelease(t, "v1.2.3")
			rel.status = c.status
			h := runHost(t, rel, c.ref, map[string]string{"install": c.install})
			if log := h.log(); h.failed != c.failed || !strings.Contains(log, c.logs) {
				t.Errorf("failed step %q, want %q with %q:\n%s", h.failed, c.failed, c.logs, log)
			}
		})
	}
}

// TestHostActionMatchesTheContainerAction: host mode has the container
// action's inputs (with the same defaults) plus version and install, its
// outputs, and passes every input but upload-export to loop-action.
func TestHostActionMatchesTheContainerAction(t *testing.T) {
	t.Parallel()
	host, docker := loadComposite(t, "../../host/action.yml"), loadActionYAML(t, "../../action.yml")
	for name, in := range docker.Inputs {
		h, ok := host.Inputs[name]
		if !ok || h.Default != in.Default {
			t.Errorf("input %s: host has %v (%q), the container action %q", name, ok, h.Default, in.Default)
		}
	}
	var extra, outs []string
	for name := range host.Inputs {
		if _, ok := docker.Inputs[name]; !ok {
			extra = append(extra, name)
		}
	}
	if diff := cmp.Diff([]string{"install", "version"}, slices.Sorted(slices.Values(extra))); diff != "" {
		t.Errorf("inputs only host mode has (-want +got):\n%s", diff)
	}
	for name := range docker.Outputs {
		outs = append(outs, name)
	}
	for name := range host.Outputs {
		if _, ok := docker.Outputs[name]; !ok {
			t.Errorf("output %s is only in host mode", name)
		}
	}
	if len(host.Outputs) != len(outs) {
		t.Errorf("host mode has %d outputs, the container action %d", len(host.Outputs), len(outs))
	}
	var loop ciStep
	for _, s := range host.Runs.Steps {
		if s.ID == "loop" {
			loop = s
		}
	}
	for name := range docker.Inputs {
		want := "${{ inputs." + name + " }}"
		if name == "upload-export" {
			want = "false"
		}
		if got := loop.Env["INPUT_"+strings.ToUpper(name)]; got != want {
			t.Errorf("the loop step passes INPUT_%s=%q, want %q", strings.ToUpper(name), got, want)
		}
	}
}

// loadActionYAML reads a Docker action's inputs and outputs.
func loadActionYAML(t *testing.T, file string) compositeAction {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var a compositeAction
	if err := yamlUnmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a
}
