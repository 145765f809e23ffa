package action

import (
	stdcmp "cmp"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// commentEvent is an issue_comment payload: comment id by author (of type
// typ) on pull request #7, or on issue #7 when onIssue.
func commentEvent(action string, id int64, author, typ, body string, onIssue bool) map[string]any {
	issue := map[string]any{"number": float64(7)}
	if !onIssue {
		issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/octo-org/demo/pulls/7"}
	}
	return map[string]any{
		"action": action, "issue": issue,
		"comment": map[string]any{"id": float64(id), "body": body, "user": map[string]any{"login": author, "type": typ}},
	}
}

// TestCommentEventsThatRunNothing: what an issue_comment job does before
// it would open the state branch. Edits, comments on issues, bots and
// comments without a command cost no API call; a command on a fork's pull
// request is refused, in words only to writers.
func TestCommentEventsThatRunNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		action    string
		author    string
		typ       string
		body      string
		onIssue   bool
		fork      bool
		setup     func(m *memJob)
		err       string // part of the job's error; "" for none
		calls     bool   // GitHub is asked anything
		reactions []string
		reply     string
		summary   string // part of the summary output and the notice; "" when the job fails
	}{
		{name: "an edit", action: "edited", author: "writer", body: "/loop approve ui", summary: "ignored: comment 3000000001 was edited, not created"},
		{name: "on an issue", author: "writer", body: "/loop approve ui", onIssue: true, summary: "ignored: comment 3000000001 is on issue #7, not on a pull request"},
		{name: "by a bot", author: "renovate[bot]", typ: "Bot", body: "/loop approve ui", summary: "ignored: comment 3000000001 is by @renovate[bot], a bot"},
		{name: "by the bot's login", author: "GITHUB-ACTIONS[bot]", body: "/loop approve ui", summary: "a bot or the bot's own login"},
		{name: "no command", author: "writer", body: "thanks, looks good", summary: "ignored: comment 3000000001 holds no /loop command"},
		{name: "a quoted command", author: "writer", body: "> /loop approve ui", summary: "holds no /loop command"},
		{name: "without a token", author: "writer", body: "/loop approve ui", setup: func(m *memJob) { m.j.client = nil },
			err: "input github-token is empty: the action needs it to answer /loop commands"},
		{name: "on a pull request GitHub does not know", author: "writer", body: "/loop approve ui",
			setup: func(m *memJob) { m.gh.FailEvery("GET", "/repos/*/*/pulls/7", http.StatusNotFound) }, err: "/repos/octo-org/demo/pulls/7: 404 Not Found", calls: true},
		{name: "on a fork, by a reader", author: "reader", body: "/loop approve @octo-org/everyone", fork: true,
			calls: true, reactions: []string{"-1"}, summary: "refused: comment 3000000001 by @reader: pull request #7 comes from a fork (mallory/demo)"},
		{name: "on a fork, by a writer", author: "writer", body: "/loop approve @octo-org/everyone", fork: true,
			calls: true, reactions: []string{"-1"}, reply: "this pull request comes from a fork, so loop-action only evaluates the gate on it",
			summary: "/loop commands never run its code with this repository's token and secrets"},
		{name: "on a fork, by a writer whose permission cannot be checked", author: "writer", body: "/loop approve", fork: true,
			setup: func(m *memJob) { m.gh.FailEvery("GET", "/repos/*/*/collaborators/*/permission", http.StatusBadGateway) }, calls: true, reactions: []string{"-1"}, summary: "refused: comment 3000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			if tt.fork {
				m.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, Author: "writer", HeadSHA: memHead, BaseSHA: memBase, HeadRepo: "mallory/demo"})
			}
			id := m.gh.AddComment(owner, repo, 7, tt.author, stdcmp.Or(tt.typ, "User"), tt.body)
			if tt.setup != nil {
				tt.setup(m)
			}
			m.j.ctx.EventName, m.j.ctx.Event = "issue_comment", commentEvent(stdcmp.Or(tt.action, "created"), id, tt.author, stdcmp.Or(tt.typ, "User"), tt.body, tt.onIssue)
			err := m.j.handle(context.Background())
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("the job's error: %v, want one containing %q", err, tt.err)
			}
			if calls := m.gh.Requests(); (len(calls) > 0) != tt.calls {
				t.Errorf("calls %q, want some: %t", calls, tt.calls)
			}
			if diff := cmp.Diff(tt.reactions, reactionsTo(m.gh, id)); diff != "" {
				t.Errorf("reactions (-want +got):\n%s", diff)
			}
			wantReplies(t, m.replies(tt.author), tt.reply)
			if r := m.replies(tt.author); len(r) > 0 && strings.Contains(r[0], "everyone") {
				t.Errorf("the reply echoes the comment: %q", r[0])
			}
			set, _ := os.ReadFile(filepath.Join(m.commands, "set_output"))
			if tt.summary == "" {
				if len(set) != 0 {
					t.Errorf("a job that failed set outputs:\n%s", set)
				}
				return
			}
			out := outputs(t, m.commands)
			if !strings.Contains(out["summary"], tt.summary) || out["success"] != "false" {
				t.Errorf("outputs %v, want success false and a summary containing %q", out, tt.summary)
			}
			if !strings.Contains(m.log.String(), "::notice::"+out["summary"]+"\n") {
				t.Errorf("no notice of the summary in the job log:\n%s", m.log)
			}
		})
	}
}

// TestLoopConfigComesFromTheBase: a pull request's loop config is read
// through the API at its base commit, never from the pull request's own
// copy in the workspace, unless allow-head-config says so; without a
// token or a base it is an error, not a fallback on the head's copy.
func TestLoopConfigComesFromTheBase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		ref       string
		setup     func(m *memJob)
		maxIter   int // the config's stop.max_iterations: 3 from the base, 1 from the head
		err       string
		headAllow bool
	}{
		{name: "from the base", ref: memBase, maxIter: 3},
		{name: "allow-head-config", ref: memBase, headAllow: true, maxIter: 1},
		{name: "no base commit", ref: "", err: "no base commit to read the loop config from"},
		{name: "no token", ref: memBase, setup: func(m *memJob) { m.j.client = nil }, err: "input github-token is empty"},
		{name: "the base has none", ref: memBase, setup: func(m *memJob) {
			m.gh.FailEvery("GET", "/repos/*/*/contents/.github/loop.toml", http.StatusNotFound)
		},
			err: "read the loop config from the base commit (the pull request's own copy is not trusted)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			m.gh.AddFile(owner, repo, memBase, ".github/loop.toml", []byte(demoLoop))
			writeFile(t, filepath.Join(m.j.workspace, ".github/loop.toml"), lenient)
			m.j.in.AllowHeadConfig = tt.headAllow
			if tt.setup != nil {
				tt.setup(m)
			}
			cfg, err := m.j.configAt(context.Background(), tt.ref)
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one containing %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case cfg.Stop.MaxIterations != tt.maxIter:
				t.Errorf("stop.max_iterations %d, want %d: the config came from the wrong place", cfg.Stop.MaxIterations, tt.maxIter)
			}
		})
	}
}
