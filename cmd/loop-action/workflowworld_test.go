//go:build linux

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/scaffold"
	"github.com/loop-action/loop-action/internal/testing/artifactfake"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

const (
	owner, repo = "octo-org", "demo"
	prNumber    = 7
)

// wfWorld is what a workflow's jobs talk to, on loopback: the GitHub fake
// (API), a bare repository served over smart HTTP for the job's token (the
// remote checkout fetches from and the action pushes to), the release of
// loop-action host mode installs (the test binary), the artifact fake and
// a cache store; and a scripted claude that fixes the seeded bug.
type wfWorld struct {
	t       *testing.T
	dir     string
	bare    string
	gh      *githubfake.Server
	git     *gitfake.Server
	art     *artifactfake.Server
	token   string
	secrets map[string]string
	cache   string
	agent   string // the directory holding the scripted claude
	calls   string // a line per call of it
	// configAs are more paths the seed's config is copied to (a recipe's
	// config: input).
	configAs []string
	// configExtra is appended to the config init rendered.
	configExtra string
	runs        int // workflow runs so far: each has its own run id
}

func newWFWorld(t *testing.T) *wfWorld {
	t.Helper()
	w := &wfWorld{t: t, dir: t.TempDir(), token: secretValue(t, "ghs_"), cache: t.TempDir()}
	w.secrets = map[string]string{"ANTHROPIC_API_KEY": secretValue(t, "sk-ant-")}
	w.bare = gitfake.InitBare(t, filepath.Join(w.dir, "git", owner, repo+".git"))
	w.gh = githubfake.New()
	t.Cleanup(w.gh.Close)
	w.gh.SetToken(w.token, "github-actions[bot]")
	w.gh.AddRepo(owner, repo)
	w.gh.SetPermission(owner, repo, "writer", "write")
	rel := newRelease(t, "v1")
	rel.repo = "loop-action/loop-action"
	w.git = gitfake.Start(t, gitfake.Options{Dir: filepath.Join(w.dir, "git"), Tokens: []string{w.token},
		Public: map[string]http.Handler{"/loop-action/loop-action/releases/": rel}})
	w.art = artifactfake.New()
	t.Cleanup(w.art.Close)
	w.agent, w.calls = filepath.Join(w.dir, "agent"), filepath.Join(w.dir, "agent-calls")
	writeTestFile(t, filepath.Join(w.agent, "claude"), fmt.Sprintf(scriptedClaude, w.calls))
	if err := os.Chmod(filepath.Join(w.agent, "claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// scriptedClaude stands in for the claude-code preset's CLI: it fixes the
// seeded bug (a - b where a + b is meant) in whichever of the kinds'
// sources is there, logs the call, and answers as `claude -p
// --output-format json` does.
const scriptedClaude = `#!/bin/sh
cat >/dev/null
echo call >>%q
for f in calc.go calc.js calc.py src/lib.rs calc.sh; do
	if [ -f "$f" ]; then sed -i 's/a - b/a + b/' "$f"; fi
done
printf '{"type":"result","subtype":"success","is_error":false,"result":"Fixed add.","total_cost_usd":0.01,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":50}}\n'
`

// agentCalls is how often the scripted claude ran.
func (w *wfWorld) agentCalls() int {
	b, err := os.ReadFile(w.calls)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return strings.Count(string(b), "call\n")
}

// emulator runs file, found in the repository's main, in this world.
func (w *wfWorld) emulator(file string) *emulator {
	t := w.t
	w.runs++
	return &emulator{
		t: t, file: file, runID: fmt.Sprint(w.runs), wf: loadWorkflow(t, file), host: absPath(t, "../../host"), token: w.token, secrets: w.secrets,
		env: w.runnerEnv(), cache: w.cache, log: &strings.Builder{},
		uses: map[string]standIn{
			"actions/checkout@v4": checkoutStandIn(w.token), "actions/setup-go@v5": setupGoStandIn,
			"actions/setup-node@v4": setupNodeStandIn, "actions/setup-python@v5": setupPythonStandIn,
			"actions/cache/restore@v4": cacheRestoreStandIn, "actions/cache/save@v4": cacheSaveStandIn,
			"actions/upload-artifact@v4": uploadArtifactStandIn(w.art, false),
			"loop-action/loop-action@v1": w.containerStandIn,
		},
		// The preset's CLI is the scripted claude; npm install -g of the
		// real one would reach for a model.
		replace: map[string]string{"Install the agent CLI (claude-code)": fmt.Sprintf("echo %q >> \"$GITHUB_PATH\"", w.agent)},
	}
}

// containerStandIn is the container action (action.yml, runs.using
// docker) as far as its entrypoint goes: the same binary run as
// `loop-action action` in the workspace, with every input as INPUT_<NAME>
// (action.yml's defaults for those not given) and the step's environment,
// and the scripted claude on PATH as the CLI an image would hold. The
// container itself (its mounts, the runner's variable allowlist, the
// dropped capabilities) is .ci/container's to test.
func (w *wfWorld) containerStandIn(ctx context.Context, j *jobEnv, with map[string]string, env []string) (map[string]string, error) {
	a := loadActionYAML(w.t, "../../action.yml")
	for k := range with {
		if _, ok := a.Inputs[k]; !ok {
			w.t.Fatalf("with: %s is not an input of action.yml", k)
		}
	}
	more := slices.Clone(env)
	for name, in := range a.Inputs {
		v, ok := with[name]
		if !ok {
			v = strings.ReplaceAll(in.Default, "${{ github.token }}", w.token)
		}
		more = append(more, "INPUT_"+strings.ToUpper(name)+"="+v)
	}
	output := filepath.Join(j.temp, "container-output")
	writeTestFile(w.t, output, "")
	more = append(more, "GITHUB_OUTPUT="+output, "PATH="+w.agent+string(filepath.ListSeparator)+j.getenv("PATH"),
		// what the runner gives a container action for the artifact service
		"ACTIONS_RESULTS_URL="+w.art.URL(), "ACTIONS_RUNTIME_URL="+w.art.URL(), "ACTIONS_RUNTIME_TOKEN="+w.art.Token(j.getenv("GITHUB_RUN_ID"), "1"))
	cmd := shippedCommand(ctx, w.t, j.dir, j.environ(more...), "action")
	cmd.Stdout, cmd.Stderr = j.log, j.log
	err := cmd.Run()
	return readOutputFile(w.t, output), err
}

// runnerEnv is what a GitHub-hosted runner's jobs start with, as far as
// these workflows need it: this machine's PATH (its tools stand for the
// runner image's), a HOME of their own, the repository and the servers,
// the toolchains' caches shared with the test (go's as setup-go leaves
// them, rustup's and cargo's as the image has them), and corepack pinned
// to the package manager versions it knows: its lookup of the latest
// ones fails against the npm registry here (no signature its keys match).
func (w *wfWorld) runnerEnv() []string {
	env := append(baseEnv(w.t), "GITHUB_REPOSITORY="+owner+"/"+repo, "GITHUB_REPOSITORY_OWNER="+owner,
		"GITHUB_API_URL="+w.gh.URL(), "GITHUB_SERVER_URL="+w.git.URL, "GITHUB_RETENTION_DAYS=1",
		"COREPACK_HOME="+corepackHome(w.t), "COREPACK_DEFAULT_TO_LATEST=0", "COREPACK_ENABLE_DOWNLOAD_PROMPT=0")
	out, err := subprocess.ForTest(w.t, "go", "env", "GOMODCACHE", "GOCACHE", "GOPROXY").Output()
	if err != nil {
		w.t.Fatalf("go env: %v", err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		env = append(env, []string{"GOMODCACHE", "GOCACHE", "GOPROXY"}[i]+"="+line)
	}
	home, _ := os.UserHomeDir()
	env = append(env, "RUSTUP_HOME="+or(os.Getenv("RUSTUP_HOME"), filepath.Join(home, ".rustup")),
		"CARGO_HOME="+or(os.Getenv("CARGO_HOME"), filepath.Join(home, ".cargo")))
	return env
}

// corepackHome is one corepack cache for the tests on this machine, so
// pnpm and yarn are downloaded once.
func corepackHome(t *testing.T) string {
	dir := filepath.Join(os.TempDir(), "loop-action-test-corepack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// seed makes the repository's main from files (a fresh repository of one
// kind) plus what `loop-action init` (the real command) writes for it with
// template; it returns main's commit.
func (w *wfWorld) seed(files map[string]string, template string) string {
	t := w.t
	dir := filepath.Join(w.dir, "seed")
	for name, content := range files {
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	// The shipped binary is built (once, under the race detector) before
	// the bound starts: on a loaded machine the build alone took most of
	// it and init was killed.
	if _, err := shippedExe(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), hostileBound)
	defer cancel()
	out, err := shippedCommand(ctx, t, dir, baseEnv(t), "init", "--yes", "--template", template, "--name", "calc").CombinedOutput()
	if err != nil {
		t.Fatalf("loop-action init: %v\n%s", err, out)
	}
	if w.configExtra != "" {
		writeTestFile(t, filepath.Join(dir, scaffold.ConfigPath), readFile(t, filepath.Join(dir, scaffold.ConfigPath))+w.configExtra)
	}
	for _, p := range w.configAs {
		writeTestFile(t, filepath.Join(dir, p), readFile(t, filepath.Join(dir, scaffold.ConfigPath)))
	}
	gitfake.Git(t, dir, "init", "-q", "-b", "main")
	gitfake.Git(t, dir, "add", "-A")
	gitfake.Git(t, dir, "commit", "-qm", "calc, and loop-action init --template "+template)
	gitfake.Git(t, dir, "push", "-q", w.bare, "main")
	sha := strings.TrimSpace(gitfake.Git(t, dir, "rev-parse", "HEAD"))
	// The contents API, from which the action reads a pull request's
	// config at its base.
	for _, p := range append([]string{scaffold.ConfigPath}, w.configAs...) {
		w.gh.AddFile(owner, repo, sha, p, []byte(readFile(t, filepath.Join(dir, p))))
	}
	return sha
}

// commit makes a commit on top of parent in the bare repository with
// files changed (or, for "", removed), and points ref at it.
func (w *wfWorld) commit(parent, ref string, files map[string]string, msg string) string {
	t := w.t
	dir := filepath.Join(t.TempDir(), "clone")
	gitfake.Git(t, "", "clone", "-q", w.bare, dir)
	gitfake.Git(t, dir, "checkout", "-q", parent)
	for name, content := range files {
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	gitfake.Git(t, dir, "add", "-A")
	gitfake.Git(t, dir, "commit", "-qm", msg)
	sha := strings.TrimSpace(gitfake.Git(t, dir, "rev-parse", "HEAD"))
	gitfake.Git(t, dir, "push", "-q", "origin", "HEAD:"+ref)
	return sha
}

// rev is what ref points to in the bare repository ("" when nothing).
func (w *wfWorld) rev(ref string) string {
	cmd := subprocess.ForTest(w.t, "git", "--git-dir="+w.bare, "rev-parse", "-q", "--verify", ref+"^{commit}")
	cmd.Env = gitfake.Env(w.t.TempDir())
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

func (w *wfWorld) gitOut(args ...string) string {
	return strings.TrimSpace(gitfake.Git(w.t, "", append([]string{"--git-dir=" + w.bare}, args...)...))
}

// openPR makes head (a commit already in the bare repository) the head
// of pull request prNumber into main, as GitHub does: the fake's pull
// request, refs/pull/N/head, and the merge commit refs/pull/N/merge, which
// is GITHUB_SHA on pull_request. headRepo is "" for a branch of this
// repository.
func (w *wfWorld) openPR(head, headRepo string) {
	base := w.rev("refs/heads/main")
	w.gitOut("update-ref", fmt.Sprintf("refs/pull/%d/head", prNumber), head)
	tree := w.gitOut("merge-tree", "--write-tree", base, head)
	merge := w.gitOut("commit-tree", "-p", base, "-p", head, "-m", "Merge", strings.Fields(tree)[0])
	w.gitOut("update-ref", fmt.Sprintf("refs/pull/%d/merge", prNumber), merge)
	w.gh.AddPull(owner, repo, githubfake.Pull{Number: prNumber, Author: "writer", HeadSHA: head, HeadRef: "feature", HeadRepo: headRepo, BaseRef: "main", BaseSHA: base})
}

func repoJSON(full string) map[string]any {
	o, n, _ := strings.Cut(full, "/")
	return map[string]any{"name": n, "full_name": full, "fork": full != owner+"/"+repo, "owner": map[string]any{"login": o}, "default_branch": "main"}
}

// prEvent is pull_request with action on the pull request openPR made.
func (w *wfWorld) prEvent(action, head, headRepo string) ghEvent {
	fork := headRepo != ""
	hr := or(headRepo, owner+"/"+repo)
	return ghEvent{name: "pull_request", actor: "writer", fork: fork,
		sha: w.rev(fmt.Sprintf("refs/pull/%d/merge", prNumber)), ref: fmt.Sprintf("refs/pull/%d/merge", prNumber),
		payload: map[string]any{"action": action, "number": float64(prNumber), "repository": repoJSON(owner + "/" + repo),
			"sender": map[string]any{"login": "writer", "type": "User"},
			"pull_request": map[string]any{"number": float64(prNumber), "user": map[string]any{"login": "writer"},
				"head": map[string]any{"sha": head, "ref": "feature", "repo": repoJSON(hr)},
				"base": map[string]any{"sha": w.rev("refs/heads/main"), "ref": "main", "repo": repoJSON(owner + "/" + repo)}}}}
}

// commentEvent is a comment by user on the pull request, created on the
// GitHub fake too (the action reacts to it).
func (w *wfWorld) commentEvent(user, body string) ghEvent {
	id := w.gh.AddComment(owner, repo, prNumber, user, "User", body)
	return ghEvent{name: "issue_comment", actor: user, sha: w.rev("refs/heads/main"), ref: "refs/heads/main",
		payload: map[string]any{"action": "created", "repository": repoJSON(owner + "/" + repo),
			"sender": map[string]any{"login": user, "type": "User"},
			"issue":  map[string]any{"number": float64(prNumber), "pull_request": map[string]any{"url": "https://api.github.com/repos/octo-org/demo/pulls/7"}},
			"comment": map[string]any{"id": float64(id), "body": body, "user": map[string]any{"login": user, "type": "User"},
				"author_association": "NONE"}}}
}

// scheduleEvent is the nightly cron on main.
func (w *wfWorld) scheduleEvent() ghEvent {
	return ghEvent{name: "schedule", actor: "octo-org", sha: w.rev("refs/heads/main"), ref: "refs/heads/main",
		payload: map[string]any{"schedule": "17 3 * * *", "repository": repoJSON(owner + "/" + repo)}}
}

// dispatchEvent is workflow_dispatch on branch.
func (w *wfWorld) dispatchEvent(branch string) ghEvent {
	return ghEvent{name: "workflow_dispatch", actor: "writer", sha: w.rev("refs/heads/" + branch), ref: "refs/heads/" + branch,
		payload: map[string]any{"inputs": map[string]any{}, "ref": "refs/heads/" + branch, "repository": repoJSON(owner + "/" + repo),
			"sender": map[string]any{"login": "writer", "type": "User"}}}
}

// statusesOf are the loop/calc states set on sha, oldest first.
func (w *wfWorld) statusesOf(sha string) []string {
	var out []string
	for _, st := range w.gh.Statuses(owner, repo, sha) {
		if st.Context == "loop/calc" {
			out = append(out, st.State)
		}
	}
	return out
}

// successes are the commits that got loop/calc success.
func (w *wfWorld) successes() []string {
	var out []string
	for _, st := range w.gh.AllStatuses(owner, repo) {
		if st.Context == "loop/calc" && st.State == "success" && !slices.Contains(out, st.SHA) {
			out = append(out, st.SHA)
		}
	}
	return out
}

// runnerArch is RUNNER_ARCH for this machine.
var runnerArch = map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
