//go:build linux

package main

import (
	"encoding/base64"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// actionWorld is what `loop-action action` needs around it, on loopback:
// a fake GitHub API, a repository served over smart HTTP (git
// http-backend) for one token only, and a checkout of it.
type actionWorld struct {
	dir, bare, workspace, sha string
	api, git                  string // base URLs
}

func newActionWorld(t *testing.T, token string) *actionWorld {
	t.Helper()
	return newActionWorldOf(t, token, thiefLoop, nil)
}

// newActionWorldOf is newActionWorld with another loop config, and public
// routes served beside the repositories (release downloads, as github.com
// serves them), by path prefix.
func newActionWorldOf(t *testing.T, token, loopToml string, public map[string]http.Handler) *actionWorld {
	t.Helper()
	w := &actionWorld{dir: t.TempDir()}
	w.bare = filepath.Join(w.dir, "git", "octo-org", "demo.git")
	gitIn(t, w.dir, "init", "-q", "--bare", "-b", "main", w.bare)
	gitIn(t, w.bare, "config", "http.receivepack", "true")
	seed := project(t, loopToml)
	writeTestFile(t, filepath.Join(seed, ".github", "loop.toml"), loopToml)
	writeTestFile(t, filepath.Join(seed, ".gitignore"), ".loop/\n")
	gitIn(t, seed, "init", "-q", "-b", "main")
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-q", "-m", "demo")
	gitIn(t, seed, "push", "-q", w.bare, "main")
	w.sha = strings.TrimSpace(gitIn(t, seed, "rev-parse", "HEAD"))
	w.workspace = filepath.Join(w.dir, "workspace")
	gitIn(t, w.dir, "clone", "-q", "file://"+w.bare, w.workspace)
	gh := githubfake.New()
	t.Cleanup(gh.Close)
	gh.SetToken(token, "github-actions[bot]")
	w.api = gh.URL()
	w.git = serveRepos(t, filepath.Join(w.dir, "git"), token, public)
	return w
}

// env is the job's environment as the runner sets it for a Docker action
// on workflow_dispatch, without the secrets.
func (w *actionWorld) env(t *testing.T) []string {
	t.Helper()
	commands := filepath.Join(w.dir, "file_commands")
	for _, f := range []string{"set_output", "step_summary"} {
		writeTestFile(t, filepath.Join(commands, f), "")
	}
	event := filepath.Join(w.dir, "event.json")
	writeTestFile(t, event, `{"inputs": {}, "ref": "refs/heads/main", "repository": {"name": "demo", "full_name": "octo-org/demo", "owner": {"login": "octo-org"}}}`)
	return append(baseEnv(t),
		"GITHUB_ACTIONS=true", "CI=true", "GITHUB_EVENT_NAME=workflow_dispatch", "GITHUB_EVENT_PATH="+event,
		"GITHUB_WORKSPACE="+w.workspace, "GITHUB_REPOSITORY=octo-org/demo", "GITHUB_REPOSITORY_OWNER=octo-org",
		"GITHUB_API_URL="+w.api, "GITHUB_SERVER_URL="+w.git, "GITHUB_RUN_ID=1", "GITHUB_RUN_ATTEMPT=1",
		"GITHUB_SHA="+w.sha, "GITHUB_REF=refs/heads/main", "GITHUB_REF_NAME=main",
		"GITHUB_OUTPUT="+filepath.Join(commands, "set_output"), "GITHUB_STEP_SUMMARY="+filepath.Join(commands, "step_summary"),
		"INPUT_CONFIG=.github/loop.toml", "INPUT_STATE-BRANCH=loop-state", "INPUT_UPLOAD-EXPORT=false",
		"INPUT_FAIL-ON-UNSUCCESSFUL=true", "INPUT_COMMENT=false")
}

// gitIn runs git in dir, with a fixed identity and no global config.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serveRepos serves the repositories under root over smart HTTP, to
// requests that carry token, and the public routes to anyone, on a
// loopback port; it returns the base URL.
func serveRepos(t *testing.T, root, token string, public map[string]http.Handler) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		for prefix, h := range public {
			if strings.HasPrefix(r.URL.Path, prefix) {
				h.ServeHTTP(rw, r)
				return
			}
		}
		if r.Header.Get("Authorization") != want {
			rw.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(rw, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(rw, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
