package action

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// A memJob is one job of the action on pull request #7 of the demo loop,
// with githubfake for GitHub and a dir: store for the state branch: the
// action's decisions run in process, with no git and no agent. Tests call the decision they are about (catchUp, the verifier,
// report) directly; the end-to-end tests drive the same through Main.
type memJob struct {
	t        *testing.T
	gh       *githubfake.Server
	api      *github.Client // the job's client, also when a test takes it away
	j        *job
	s        *session
	log      *bytes.Buffer
	commands string // GITHUB_OUTPUT and GITHUB_STEP_SUMMARY are here
}

// The pull request's head, its base, and the workspace snapshot under
// review.
const (
	memHead = "cafe000000000000000000000000000000000001"
	memBase = "base000000000000000000000000000000000002"
	memSnap = "5a5a000000000000000000000000000000000003"
)

// newGitHub is the decision tests' GitHub: the demo repository on the
// fake, whose clock moves on a second at every stamp (so that an edit
// shows), and a client over it acting as the bot that never retries.
func newGitHub(t *testing.T) (*githubfake.Server, *github.Client) {
	t.Helper()
	fake := githubfake.New()
	t.Cleanup(fake.Close)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fake.SetClock(func() time.Time { now = now.Add(time.Second); return now }) // called under the fake's lock
	fake.SetToken("ghs_decisions", bot)
	fake.AddRepo(owner, repo)
	c, err := github.New(fake.URL(), "ghs_decisions", github.WithRetry(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	return fake, c
}

// reactionsTo are the reactions to comment id, sorted.
func reactionsTo(gh *githubfake.Server, id int64) []string {
	return slices.Sorted(slices.Values(gh.Reactions(owner, repo, id)))
}

func newMemJob(t *testing.T, config string) *memJob {
	t.Helper()
	cfg, err := loop.Parse(".github/loop.toml", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	m := &memJob{t: t, log: &bytes.Buffer{}, commands: t.TempDir()}
	m.gh, m.api = newGitHub(t)
	m.gh.SetPermission(owner, repo, "writer", "write")
	m.gh.SetPermission(owner, repo, "reader", "read")
	m.gh.SetPermission(owner, repo, "boss", "admin")
	m.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, Author: "writer", HeadSHA: memHead, BaseSHA: memBase})
	env := map[string]string{
		"GITHUB_OUTPUT":       filepath.Join(m.commands, "set_output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(m.commands, "step_summary"),
	}
	getenv := func(k string) string { return env[k] }
	m.j = &job{
		a:   githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(m.log)),
		env: Env{Getenv: getenv, Stdout: m.log, Now: time.Now, Version: "test"},
		in: Inputs{Config: ".github/loop.toml", StateBranch: "loop-state", Bot: bot,
			Comment: true, FailOnUnsuccessful: true},
		ctx:   &githubactions.GitHubContext{ServerURL: "https://github.com", RunID: 4242},
		owner: owner, repo: repo, workspace: t.TempDir(), client: m.api,
	}
	m.s = &session{cfg: cfg, store: store, runID: "demo/pr-7", pr: 7, head: memHead}
	return m
}

// pause leaves the run as a job that paused for the ui review leaves it:
// the checkpoint awaits review of memSnap on the head, and the bot's
// review request is the newest comment. It returns the request's id.
func (m *memJob) pause() int64 {
	m.t.Helper()
	cp := &state.Checkpoint{
		RunID: m.s.runID, Loop: "demo", Commit: memHead, Status: state.AwaitingReview, Iteration: 1, MaxIterations: 3,
		Snapshot: memSnap, Verdicts: pausedVerdicts(),
	}
	if err := m.s.store.Save(context.Background(), cp, state.Commit{KeepWorkspace: true}); err != nil {
		m.t.Fatal(err)
	}
	return m.request("ui", memSnap)
}

// request posts the bot's request to review goal on snapshot.
func (m *memJob) request(goal, snapshot string) int64 {
	return m.gh.AddComment(owner, repo, 7, bot, "Bot", reviewMarker("demo", goal, snapshot)+"\n⏸ **Review wanted**")
}

// command writes body on the pull request as author and has the job
// handle the comments it has not handled yet, as an issue_comment job
// does before it runs the loop.
func (m *memJob) command(author, body string) (int64, steer) {
	m.t.Helper()
	id := m.gh.AddComment(owner, repo, 7, author, "User", body)
	return id, m.catchUp()
}

func (m *memJob) catchUp() steer {
	m.t.Helper()
	ctx := context.Background()
	run, err := runner.Open(ctx, runner.Options{Config: m.s.cfg, Root: m.j.workspace, RunID: m.s.runID, Store: m.s.store,
		Now: time.Now, VerifyDecisions: m.j.verifier(m.s)})
	if err != nil {
		m.t.Fatal(err)
	}
	m.s.run = run // as a job's session holds it: locked, loaded once
	defer func() {
		if err := run.Close(); err != nil {
			m.t.Error(err)
		}
		m.s.run = nil
	}()
	pr, err := m.api.PullRequest(ctx, owner, repo, 7)
	if err != nil {
		m.t.Fatal(err)
	}
	st, err := m.j.catchUp(ctx, m.s, pr)
	if err != nil {
		m.t.Fatal(err)
	}
	return st
}

// checkpoint is the run's checkpoint as the store holds it now, or nil.
func (m *memJob) checkpoint() *state.Checkpoint {
	m.t.Helper()
	cp, err := m.s.store.Load(context.Background(), m.s.runID)
	if errors.Is(err, state.ErrNotFound) {
		return nil
	}
	if err != nil {
		m.t.Fatal(err)
	}
	return cp
}

// replies are the bot's comments addressed to login.
func (m *memJob) replies(login string) []string {
	var out []string
	for _, c := range m.gh.Comments(owner, repo, 7) {
		if c.User == bot && strings.HasPrefix(c.Body, "@"+login+":") {
			out = append(out, c.Body)
		}
	}
	return out
}

// pausedVerdicts are the demo loop's verdicts when it pauses: tests pass,
// ui waits for its review.
func pausedVerdicts() []gate.Verdict {
	return []gate.Verdict{
		{Goal: "tests", Blocking: true, Satisfied: true, Passed: 1, Total: 1,
			Checks: []gate.CheckVerdict{{Type: "test", Status: gate.Pass, Evidence: "`sh test.sh` exited 0"}}},
		{Goal: "ui", Blocking: true, Passed: 1, Total: 2, Checks: []gate.CheckVerdict{
			{Type: "file_exists", Status: gate.Pass, Evidence: "out/summary.md"},
			{Index: 1, Type: "manual", Status: gate.Pending, Evidence: "Does the summary read well?", ReviewRequested: true}}},
	}
}
