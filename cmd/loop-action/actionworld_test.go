//go:build linux

package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
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
	gitfake.Git(t, w.dir, "init", "-q", "--bare", "-b", "main", w.bare)
	gitfake.Git(t, w.bare, "config", "http.receivepack", "true")
	seed := project(t, loopToml)
	writeTestFile(t, filepath.Join(seed, ".github", "loop.toml"), loopToml)
	writeTestFile(t, filepath.Join(seed, ".gitignore"), ".loop/\n")
	gitfake.Git(t, seed, "init", "-q", "-b", "main")
	gitfake.Git(t, seed, "add", "-A")
	gitfake.Git(t, seed, "commit", "-q", "-m", "demo")
	gitfake.Git(t, seed, "push", "-q", w.bare, "main")
	w.sha = strings.TrimSpace(gitfake.Git(t, seed, "rev-parse", "HEAD"))
	w.workspace = filepath.Join(w.dir, "workspace")
	gitfake.Git(t, w.dir, "clone", "-q", "file://"+w.bare, w.workspace)
	gh := githubfake.New()
	t.Cleanup(gh.Close)
	gh.SetToken(token, "github-actions[bot]")
	w.api = gh.URL()
	w.git = gitfake.Start(t, gitfake.Options{Dir: filepath.Join(w.dir, "git"), Tokens: []string{token}, Public: public}).URL
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
