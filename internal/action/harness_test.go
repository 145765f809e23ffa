package action

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/artifactfake"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// The world the action runs in, built of fakes that behave like GitHub:
// the REST API, the artifact service, and a bare repository served over
// smart HTTP (git http-backend behind basic auth) that holds the project
// and takes the state branch.
type world struct {
	t        *testing.T
	dir      string
	gh       *githubfake.Server
	art      *artifactfake.Server
	git      *gitfake.Server
	origin   string // the bare repository
	token    string
	pushWith string // a push-token the remote takes too
	runtime  string // ACTIONS_RUNTIME_TOKEN
	baseSHA  string
	headSHA  string
	config   []byte
	agent    string // agents/fixer.sh; "" is the quickstart's
	runCount int
}

const (
	owner = "octo-org"
	repo  = "demo"
	bot   = "github-actions[bot]"
)

// demoLoop runs the quickstart's fixer; its ui goal ends with a human review.
const demoLoop = `name = "demo"
objective = "Make test.sh pass and summarise the fix."
[stop]
max_iterations = 3
max_wall_clock = "5m"
[protect]
paths = ["test.sh", "agents/**"]
[providers.script]
command = ["sh", "agents/fixer.sh"]
[[node]]
name = "fixer"
provider = "script"
goals = ["tests", "ui"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
[[goal]]
name = "ui"
  [[goal.check]]
  type = "file_exists"
  path = "out/summary.md"
  non_empty = true
  [[goal.check]]
  type = "manual"
  prompt = "Does the summary read well?"
[export]
paths = ["out/**"]
`

// listenAddr is where the fakes listen: loopback, which a container with
// the host's network reaches too.
func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, demoLoop)
}

// newWorldWith is newWorld with another loop config.
func newWorldWith(t *testing.T, config string) *world {
	t.Helper()
	return newWorldAgent(t, config, "")
}

// newWorldAgent is newWorldWith whose agents/fixer.sh is agent.
func newWorldAgent(t *testing.T, config, agent string) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir(), token: "ghs_test-token-0123456789", pushWith: "ghp_push-token-9876543210",
		config: []byte(config), agent: agent}
	w.gh = githubfake.New()
	t.Cleanup(w.gh.Close)
	w.gh.SetToken(w.token, bot)
	w.gh.SetPermission(owner, repo, "writer", "write")
	w.gh.SetPermission(owner, repo, "reader", "read")
	w.art = artifactfake.New()
	t.Cleanup(w.art.Close)
	w.runtime = w.art.Token("run-uuid-1", "job-uuid-1")
	w.makeOrigin()
	w.git = gitfake.Start(t, gitfake.Options{Dir: filepath.Join(w.dir, "git"), Tokens: []string{w.token, w.pushWith}})
	w.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, HeadSHA: w.headSHA, HeadRef: "feature", BaseRef: "main", BaseSHA: w.baseSHA, Author: "writer"})
	w.gh.AddFile(owner, repo, w.baseSHA, ".github/loop.toml", w.config)
	return w
}

func (w *world) gitCmd(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// makeOrigin builds the project: main holds the quickstart with the loop
// config; feature adds a line to the README.
func (w *world) makeOrigin() {
	w.origin = filepath.Join(w.dir, "git", owner, repo+".git")
	w.gitCmd(w.dir, "init", "-q", "--bare", "-b", "main", w.origin)
	w.gitCmd(w.origin, "config", "http.receivepack", "true")
	seed := filepath.Join(w.dir, "seed")
	w.gitCmd(w.dir, "init", "-q", "-b", "main", seed)
	for _, f := range []string{"calc.sh", "test.sh", "agents/fixer.sh"} {
		copyFile(w.t, filepath.Join("../../examples/quickstart", f), filepath.Join(seed, f))
	}
	if w.agent != "" {
		writeFile(w.t, filepath.Join(seed, "agents/fixer.sh"), w.agent)
	}
	writeFile(w.t, filepath.Join(seed, ".github/loop.toml"), string(w.config))
	writeFile(w.t, filepath.Join(seed, ".gitignore"), ".loop/\n")
	w.gitCmd(seed, "add", "-A")
	w.gitCmd(seed, "commit", "-q", "-m", "demo")
	w.baseSHA = w.gitCmd(seed, "rev-parse", "HEAD")
	w.gitCmd(seed, "checkout", "-q", "-b", "feature")
	writeFile(w.t, filepath.Join(seed, "README.md"), "# demo\n")
	w.gitCmd(seed, "add", "-A")
	w.gitCmd(seed, "commit", "-q", "-m", "readme")
	w.headSHA = w.gitCmd(seed, "rev-parse", "HEAD")
	w.gitCmd(seed, "push", "-q", w.origin, "main", "feature")
}

// workspace is a fresh checkout at ref, as actions/checkout leaves it.
func (w *world) workspace(ref string) string {
	w.t.Helper()
	w.runCount++
	ws := filepath.Join(w.dir, "jobs", strings.Repeat("j", w.runCount), "workspace")
	w.gitCmd(w.dir, "clone", "-q", "--depth", "1", "--branch", ref, "file://"+w.origin, ws)
	return ws
}

// event writes an event payload from testdata/events with placeholders
// filled in, into dir/event.json.
func (w *world) event(dir, name string, vars map[string]string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/events", name+".json"))
	if err != nil {
		w.t.Fatal(err)
	}
	s := strings.NewReplacer("HEAD_SHA", w.headSHA, "BASE_SHA", w.baseSHA).Replace(string(b))
	var ev map[string]any
	if err := json.Unmarshal([]byte(s), &ev); err != nil {
		w.t.Fatal(err)
	}
	if a := vars["action"]; a != "" {
		ev["action"] = a
	}
	if c, ok := ev["comment"].(map[string]any); ok {
		c["body"], c["id"] = vars["body"], json.Number(vars["id"])
		c["user"].(map[string]any)["login"] = vars["user"]
	}
	out, err := json.Marshal(ev)
	if err != nil {
		w.t.Fatal(err)
	}
	p := filepath.Join(dir, "event.json")
	writeFile(w.t, p, string(out))
	return p
}

// job is one invocation: the directories the runner would mount and the
// environment it would pass, with paths as this process sees them.
type jobDirs struct {
	workspace, workflow, commands, home string
}

func (w *world) jobDirs(ref string) jobDirs {
	ws := w.workspace(ref)
	base := filepath.Dir(ws)
	d := jobDirs{workspace: ws, workflow: filepath.Join(base, "workflow"), commands: filepath.Join(base, "file_commands"), home: filepath.Join(base, "home")}
	for _, p := range []string{d.workflow, d.commands, d.home} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			w.t.Fatal(err)
		}
	}
	for _, f := range []string{"set_output", "step_summary"} {
		writeFile(w.t, filepath.Join(d.commands, f), "")
	}
	return d
}

// env is the environment of a job, as the runner sets it; paths are given
// by the caller as the action will see them.
func (w *world) env(event, eventPath, workspace, commands, home string, inputs map[string]string) map[string]string {
	e := map[string]string{
		"GITHUB_ACTIONS": "true", "CI": "true", "HOME": home,
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": eventPath, "GITHUB_WORKSPACE": workspace,
		"GITHUB_REPOSITORY": owner + "/" + repo, "GITHUB_REPOSITORY_OWNER": owner,
		"GITHUB_API_URL": w.gh.URL(), "GITHUB_SERVER_URL": w.git.URL, "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_RETENTION_DAYS": "90", "GITHUB_REF_PROTECTED": "false", "GITHUB_RUN_NUMBER": "1",
		"GITHUB_SHA": w.baseSHA, "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main",
		"GITHUB_OUTPUT": commands + "/set_output", "GITHUB_STEP_SUMMARY": commands + "/step_summary",
		"ACTIONS_RUNTIME_TOKEN": w.runtime, "ACTIONS_RESULTS_URL": w.art.URL() + "/", "ACTIONS_RUNTIME_URL": w.art.URL() + "/",
		"INPUT_GITHUB-TOKEN": w.token, "INPUT_CONFIG": ".github/loop.toml", "INPUT_STATE-BRANCH": "loop-state",
		"INPUT_UPLOAD-EXPORT": "true", "INPUT_FAIL-ON-UNSUCCESSFUL": "true", "INPUT_COMMENT": "true",
		"INPUT_DELIVER": "none", // the world's jobs keep the fix unless a test says otherwise
	}
	for k, v := range inputs {
		e[k] = v
	}
	return e
}

// converged is the exit code of a world job whose run stopped with
// stopReason: a run that succeeded fails the job, since with deliver: none
// no commit carries its fix (the status rule), as does any stop but a
// pause for review.
func converged(stopReason string) int {
	if stopReason == "awaiting-review" {
		return exitOK
	}
	return exitFailed
}

// outputs reads the outputs a job set.
func outputs(t *testing.T, commands string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(commands, "set_output"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// unzip reads a zip archive into name → content.
func unzip(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = string(data)
	}
	return out
}

// tree reads a directory into relative path → content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}

// pushedBeside counts the pushes s received for other refs than the
// state branch.
func pushedBeside(s *gitfake.Server) int {
	n := 0
	for _, p := range s.Pushes() {
		if !slices.Equal(p.Refs, []string{"refs/heads/loop-state"}) {
			n++
		}
	}
	return n
}
