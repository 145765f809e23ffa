package action

import (
	"bytes"
	stdcmp "cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// An authorizeWorld is the authorize job of a workflow: the GitHub API
// (githubfake, over HTTP) and a workspace the job must never open — it
// holds a hostile loop config and package.json, as a fork's checkout
// would, though the authorize job has no checkout at all.
type authorizeWorld struct {
	t     *testing.T
	gh    *githubfake.Server
	dir   string
	ws    string // GITHUB_WORKSPACE
	home  string
	token string
}

// The heads of the same-repository pull request #7 and the fork's #8, and
// the default branch's commit (GITHUB_SHA of a comment's job).
const (
	azHead  = "aaaa000000000000000000000000000000000007"
	azFork  = "ffff000000000000000000000000000000000008"
	azMoved = "bbbb000000000000000000000000000000000007"
	azMain  = "eeee000000000000000000000000000000000001"
)

// hostileLoop is the loop config a hostile checkout holds: its agent, if
// anything ran it, would leave a mark.
const hostileLoop = `name = "pwn"
[providers.sh]
command = ["sh", "-c", "touch \"$HOME/pwned\""]
[[node]]
name = "x"
provider = "sh"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "touch \"$HOME/pwned\""
`

func newAuthorizeWorld(t *testing.T) *authorizeWorld {
	t.Helper()
	w := &authorizeWorld{t: t, gh: githubfake.New(), dir: t.TempDir(), token: "ghs_authorize-token-0123456789"}
	t.Cleanup(w.gh.Close)
	w.ws, w.home = filepath.Join(w.dir, "workspace"), filepath.Join(w.dir, "home")
	writeFile(t, filepath.Join(w.ws, ".github/loop.toml"), hostileLoop)
	writeFile(t, filepath.Join(w.ws, "package.json"), `{"name":"x","scripts":{"preinstall":"touch \"$HOME/pwned\""}}`)
	writeFile(t, filepath.Join(w.ws, ".git/config"), "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz\n")
	if err := os.MkdirAll(w.home, 0o755); err != nil {
		t.Fatal(err)
	}
	w.gh.SetToken(w.token, bot)
	for login, perm := range map[string]string{"writer": "write", "boss": "admin", "reader": "read"} {
		w.gh.SetPermission(owner, repo, login, perm)
	}
	w.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, HeadSHA: azHead, HeadRef: "feature", BaseSHA: azMain, Author: "writer"})
	w.gh.AddPull(owner, repo, githubfake.Pull{Number: 8, HeadSHA: azFork, HeadRef: "patch-1", HeadRepo: "mallory/demo", BaseSHA: azMain, Author: "mallory"})
	return w
}

// azResult is what an authorize job left.
type azResult struct {
	code    int
	log     string
	outputs map[string]string
}

// run runs the action in authorize mode on event, whose payload is ev.
func (w *authorizeWorld) run(event string, ev map[string]any, inputs map[string]string) azResult {
	w.t.Helper()
	jobDir := w.t.TempDir()
	b, err := json.Marshal(ev)
	if err != nil {
		w.t.Fatal(err)
	}
	writeFile(w.t, filepath.Join(jobDir, "event.json"), string(b))
	writeFile(w.t, filepath.Join(jobDir, "set_output"), "")
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "HOME": w.home,
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": filepath.Join(jobDir, "event.json"), "GITHUB_WORKSPACE": w.ws,
		"GITHUB_REPOSITORY": owner + "/" + repo, "GITHUB_API_URL": w.gh.URL(), "GITHUB_SERVER_URL": "http://127.0.0.1:1",
		"GITHUB_SHA": azMain, "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main", "GITHUB_RUN_ID": "4242",
		"GITHUB_OUTPUT": filepath.Join(jobDir, "set_output"),
		"INPUT_MODE":    "authorize", "INPUT_GITHUB-TOKEN": w.token,
	}
	for k, v := range inputs {
		env[k] = v
	}
	environ := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log bytes.Buffer
	err = Main(ctx, Env{Getenv: func(k string) string { return env[k] }, Environ: environ, Stdout: &log, Now: time.Now, Version: "test", Git: DeliveryGit{}})
	return azResult{code: exitOf(err), log: log.String(), outputs: outputs(w.t, jobDir)}
}

// comment writes body on pull request n as user and returns the
// issue_comment payload of its creation.
func (w *authorizeWorld) comment(n int, user, typ, body string) (int64, map[string]any) {
	id := w.gh.AddComment(owner, repo, n, user, typ, body)
	return id, azCommentEvent("created", n, id, user, typ, body)
}

func azCommentEvent(action string, n int, id int64, user, typ, body string) map[string]any {
	at := "2026-11-29T12:00:00Z"
	return map[string]any{
		"action": action,
		"issue":  map[string]any{"number": float64(n), "pull_request": map[string]any{"url": "https://api.github.com/repos/octo-org/demo/pulls/" + itoa(int64(n))}},
		"comment": map[string]any{"id": float64(id), "body": body, "created_at": at, "updated_at": at,
			"user": map[string]any{"login": user, "type": stdcmp.Or(typ, "User")}},
		"repository": map[string]any{"full_name": owner + "/" + repo, "default_branch": "main"},
	}
}

// azPullEvent is a pull_request payload for #n at head, from headRepo.
func azPullEvent(action string, n int, head, headRepo string) map[string]any {
	return map[string]any{"action": action, "number": float64(n), "pull_request": map[string]any{
		"number": float64(n), "head": map[string]any{"sha": head, "ref": "feature", "repo": map[string]any{"full_name": headRepo}},
		"base": map[string]any{"sha": azMain, "ref": "main", "repo": map[string]any{"full_name": owner + "/" + repo}}},
		"repository": map[string]any{"full_name": owner + "/" + repo, "default_branch": "main"}}
}

// botReplies are the bot's comments on pull request n, but the command
// (which a user may have written under the bot's login).
func (w *authorizeWorld) botReplies(n int, command int64) []string {
	var out []string
	for _, c := range w.gh.Comments(owner, repo, n) {
		if c.User == bot && c.ID != command {
			out = append(out, c.Body)
		}
	}
	return out
}

// TestAuthorizeComments: an issue_comment job's authorize step proceeds
// only for a /loop command on a same-repository pull request from someone
// who may give it, on the head the API reports; hostile events first.
// Refusals get the run mode's reactions, and the fork's refusal its reply
// (to writers only); a command that proceeds is not acknowledged here,
// the run mode does it once.
func TestAuthorizeComments(t *testing.T) {
	t.Parallel()
	type scene struct {
		n                int
		user, typ, body  string
		action           string
		edited           bool
		setup            func(w *authorizeWorld)
		proceed          bool
		head             string
		summary          string // part of it
		reactions        []string
		reply            string // part of the bot's one reply; "" for none
		noAPI            bool   // GitHub is asked nothing
		permissionChecks int
	}
	tests := []struct {
		name string
		scene
	}{
		{"a fork's pull request, a writer's /loop run", scene{n: 8, user: "writer", body: "/loop run",
			summary: "refused: comment", reactions: []string{"-1"}, reply: "this pull request comes from a fork", permissionChecks: 1}},
		{"a fork's pull request, a stranger's /loop approve", scene{n: 8, user: "mallory", body: "/loop approve",
			summary: "comes from a fork (mallory/demo)", reactions: []string{"-1"}, permissionChecks: 1}},
		{"a fork's pull request, a stranger's /loop status", scene{n: 8, user: "mallory", body: "/loop status",
			summary: "comes from a fork", reactions: []string{"-1"}, permissionChecks: 1}},
		{"a stranger's /loop run on a same-repository pull request", scene{n: 7, user: "stranger", body: "/loop run",
			summary: "refused: comment", reactions: []string{"-1", "eyes"}, permissionChecks: 1}},
		{"a reader's /loop approve", scene{n: 7, user: "reader", body: "/loop approve ui",
			summary: "/loop approve needs write permission on octo-org/demo; you have read", reactions: []string{"-1", "eyes"}, permissionChecks: 1}},
		{"a stranger's malformed command", scene{n: 7, user: "stranger", body: "/loop frobnicate @everyone",
			summary: "a /loop command needs write permission", reactions: []string{"-1", "eyes"}, permissionChecks: 1}},
		{"an edited comment", scene{n: 7, user: "writer", body: "/loop run", action: "edited",
			summary: "was edited, not created", noAPI: true}},
		{"a deleted comment", scene{n: 7, user: "writer", body: "/loop run", action: "deleted", summary: "was deleted", noAPI: true}},
		{"a comment created, then edited before the job", scene{n: 7, user: "stranger", body: "/loop status", edited: true,
			summary: "an edited comment is never a command", reactions: []string{"-1", "eyes"}, permissionChecks: 1}},
		{"a writer's comment created, then edited", scene{n: 7, user: "writer", body: "/loop run", edited: true,
			summary: "an edited comment is never a command", reactions: []string{"-1", "eyes"}, reply: "an edited comment is never a command", permissionChecks: 1}},
		{"a bot", scene{n: 7, user: "renovate[bot]", typ: "Bot", body: "/loop run", summary: "a bot or the bot's own login", noAPI: true}},
		{"a user writing as the bot's login", scene{n: 7, user: "GitHub-Actions[bot]", typ: "User", body: "/loop run", summary: "a bot", noAPI: true}},
		{"a command in a code block", scene{n: 7, user: "writer", body: "See:\n```\n/loop run\n```\n", summary: "holds no /loop command", noAPI: true}},
		{"a command in an HTML comment", scene{n: 7, user: "writer", body: "<!--\n/loop run\n-->", summary: "holds no /loop command", noAPI: true}},
		{"no command", scene{n: 7, user: "writer", body: "thanks!", summary: "holds no /loop command", noAPI: true}},
		{"a writer whose permission cannot be checked", scene{n: 7, user: "writer", body: "/loop run",
			setup: func(w *authorizeWorld) {
				w.gh.FailNext("GET", "/repos/octo-org/demo/collaborators/*/permission", 403, nil, `{"message":"Resource not accessible by integration"}`)
			},
			summary: "your permission could not be checked", reactions: []string{"-1", "eyes"}, reply: "your permission could not be checked", permissionChecks: 2}},
		{"a pull request whose head moved", scene{n: 7, user: "writer", body: "/loop run",
			setup: func(w *authorizeWorld) {
				w.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, HeadSHA: azMoved, HeadRef: "feature", BaseSHA: azMain, Author: "writer"})
			},
			proceed: true, head: azMoved, summary: "authorized: /loop run by @writer on pull request #7 at bbbb000", permissionChecks: 1}},
		{"a writer's /loop run", scene{n: 7, user: "writer", body: "LGTM\n\n/loop run", proceed: true, head: azHead,
			summary: "authorized: /loop run by @writer on pull request #7 at aaaa000", permissionChecks: 1}},
		{"an admin's /loop approve of a goal", scene{n: 7, user: "boss", body: "/loop approve ui", proceed: true, head: azHead,
			summary: "authorized: /loop approve by @boss", permissionChecks: 1}},
		{"a writer's malformed command", scene{n: 7, user: "writer", body: "/loop frobnicate", proceed: true, head: azHead,
			summary: "authorized: a malformed /loop command by @writer", permissionChecks: 1}},
		{"a writer's /loop reject", scene{n: 7, user: "writer", body: "/loop reject ui too dark", proceed: true, head: azHead,
			summary: "authorized: /loop reject", permissionChecks: 1}},
		{"a stranger's /loop status", scene{n: 7, user: "stranger", body: "/loop status", proceed: true, head: azHead,
			summary: "authorized: /loop status by @stranger"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newAuthorizeWorld(t)
			if tt.setup != nil {
				tt.setup(w)
			}
			id, ev := w.comment(tt.n, tt.user, tt.typ, tt.body)
			if tt.action != "" {
				ev["action"] = tt.action
			}
			if tt.edited {
				ev["comment"].(map[string]any)["updated_at"] = "2026-11-29T12:03:00Z"
			}
			before := len(w.gh.Requests())
			res := w.run("issue_comment", ev, nil)
			if res.code != exitOK {
				t.Fatalf("exit %d, want 0: the authorize job decides, it does not fail\n%s", res.code, res.log)
			}
			want := map[string]string{"proceed": "false", "head-sha": ""}
			if tt.proceed {
				want = map[string]string{"proceed": "true", "head-sha": tt.head}
			}
			for k, v := range want {
				if res.outputs[k] != v {
					t.Errorf("output %s = %q, want %q (outputs %v)\n%s", k, res.outputs[k], v, res.outputs, res.log)
				}
			}
			if s := res.outputs["summary"]; !strings.Contains(s, tt.summary) || strings.Contains(s, "\n") {
				t.Errorf("summary %q, want one line containing %q", s, tt.summary)
			}
			if !strings.Contains(res.log, "::notice::"+res.outputs["summary"]+"\n") {
				t.Errorf("the job log has no notice of the summary:\n%s", res.log)
			}
			if diff := cmp.Diff(tt.reactions, sorted(w.gh.Reactions(owner, repo, id))); diff != "" {
				t.Errorf("reactions (-want +got):\n%s", diff)
			}
			replies := w.botReplies(tt.n, id)
			wantReplies(t, replies, tt.reply)
			for _, r := range replies {
				if strings.Contains(r, "@everyone") {
					t.Errorf("a reply echoes the comment: %q", r)
				}
			}
			reqs := w.gh.Requests()[before:]
			if tt.noAPI && len(reqs) != 0 {
				t.Errorf("GitHub was asked %q for an event that is none of the loop's business", reqs)
			}
			checks := 0
			for _, r := range reqs {
				if strings.Contains(r, "/permission") {
					checks++
				}
				if strings.Contains(r, "/contents/") || strings.Contains(r, "/statuses") {
					t.Errorf("the authorize job asked %s: it reads no config and sets no status", r)
				}
			}
			if checks != tt.permissionChecks {
				t.Errorf("%d permission checks, want %d: %q", checks, tt.permissionChecks, reqs)
			}
			w.untouched()
		})
	}
}

// TestAuthorizeEvents: the other events. A pull request's own event
// proceeds on the head it names — a fork's too, whose job has no secrets
// (the summary says so); schedule and workflow_dispatch on GITHUB_SHA;
// anything else does not proceed, and none of it fails the job.
func TestAuthorizeEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		event   string
		ev      map[string]any
		proceed bool
		head    string
		summary string
	}{
		{"a fork's pull request", "pull_request", azPullEvent("synchronize", 8, azFork, "mallory/demo"), true, azFork,
			"comes from a fork (mallory/demo): its job has a read-only token and no secrets, and loop-action only evaluates the gate on it"},
		{"a pull request from a deleted fork", "pull_request", azPullEvent("opened", 8, azFork, ""), true, azFork, "comes from a fork (deleted)"},
		{"opened", "pull_request", azPullEvent("opened", 7, azHead, owner+"/"+repo), true, azHead, "authorized: pull request #7 at aaaa000 (opened)"},
		{"synchronize", "pull_request", azPullEvent("synchronize", 7, azHead, owner+"/"+repo), true, azHead, "(synchronize)"},
		{"reopened", "pull_request", azPullEvent("reopened", 7, azHead, owner+"/"+repo), true, azHead, "(reopened)"},
		{"closed", "pull_request", azPullEvent("closed", 7, azHead, owner+"/"+repo), false, "", "pull request #7 was closed"},
		{"labeled", "pull_request", azPullEvent("labeled", 7, azHead, owner+"/"+repo), false, "", "was labeled"},
		{"schedule", "schedule", map[string]any{"schedule": "17 3 * * *"}, true, azMain, "authorized: schedule on eeee000 (GITHUB_SHA)"},
		{"workflow_dispatch", "workflow_dispatch", map[string]any{"inputs": map[string]any{}}, true, azMain, "workflow_dispatch on eeee000"},
		{"push", "push", map[string]any{"ref": "refs/heads/main"}, false, "", `event "push" is not one loop-action handles`},
		{"pull_request_target", "pull_request_target", azPullEvent("opened", 8, azFork, "mallory/demo"), false, "", `event "pull_request_target"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newAuthorizeWorld(t)
			res := w.run(tt.event, tt.ev, nil)
			if res.code != exitOK {
				t.Fatalf("exit %d, want 0\n%s", res.code, res.log)
			}
			got := [3]string{res.outputs["proceed"], res.outputs["head-sha"], ""}
			if want := [3]string{map[bool]string{true: "true", false: "false"}[tt.proceed], tt.head, ""}; got != want {
				t.Errorf("proceed, head-sha = %q, want %q", got[:2], want[:2])
			}
			if !strings.Contains(res.outputs["summary"], tt.summary) {
				t.Errorf("summary %q, want it to contain %q", res.outputs["summary"], tt.summary)
			}
			if reqs := w.gh.Requests(); len(reqs) != 0 {
				t.Errorf("GitHub was asked %q: the event alone decides", reqs)
			}
			w.untouched()
		})
	}
}

// TestAuthorizeFailsOnlyOnABrokenSetup: the authorize job exits 0 for
// every decision; it fails (proceed false) only when it cannot decide: no
// token to read the pull request and the permission with, an input it does
// not know, a pull request the API does not have.
func TestAuthorizeFailsOnlyOnABrokenSetup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		inputs map[string]string
		n      int
		code   int
		log    string
	}{
		{"no token", map[string]string{"INPUT_GITHUB-TOKEN": ""}, 7, exitConfig, "input github-token is empty"},
		{"an unknown mode", map[string]string{"INPUT_MODE": "trust-me"}, 7, exitConfig, `input mode: "trust-me" is not one of run, authorize`},
		{"a pull request the API does not know", nil, 9, exitInternal, "get pull request octo-org/demo#9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newAuthorizeWorld(t)
			_, ev := w.comment(tt.n, "writer", "", "/loop run")
			res := w.run("issue_comment", ev, tt.inputs)
			if res.code != tt.code || !strings.Contains(res.log, tt.log) {
				t.Errorf("exit %d, want %d with %q in the log\n%s", res.code, tt.code, tt.log, res.log)
			}
			if res.outputs["proceed"] == "true" || res.outputs["head-sha"] != "" {
				t.Errorf("outputs %v: a job that could not decide let the loop job proceed", res.outputs)
			}
			w.untouched()
		})
	}
}

// untouched checks that nothing ran and nothing was written for the job:
// no agent's or script's mark in HOME, no git configuration written there
// (the run mode trusts its workspace in ~/.gitconfig), and no warning about
// the workspace's persisted credentials, which would mean its .git/config
// was read.
func (w *authorizeWorld) untouched() {
	w.t.Helper()
	for _, f := range []string{"pwned", ".gitconfig"} {
		if _, err := os.Lstat(filepath.Join(w.home, f)); err == nil {
			w.t.Errorf("the authorize job left %s in HOME", f)
		}
	}
}
