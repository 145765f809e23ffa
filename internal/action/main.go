package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Env is what the action takes from its process, read once by main.
type Env struct {
	Getenv  func(string) string
	Environ []string // inherited by agents and checks
	Stdout  io.Writer
	Now     func() time.Time
	Version string
	// Git builds, compares and pushes commits (package delivery). Without
	// it nothing can be certified on a commit: no status is success and
	// nothing is delivered.
	Git Git
}

// job is one action invocation.
type job struct {
	a         *githubactions.Action
	env       Env
	in        Inputs
	ctx       *githubactions.GitHubContext
	owner     string
	repo      string
	workspace string
	client    githubAPI                                      // nil without a token
	git       Git                                            // nil: nothing is certified on a commit, nothing delivered
	stores    func(ctx context.Context) (state.Store, error) // nil: the state branch
	// checkout is the workspace's git settings (core.autocrlf, core.eol),
	// read once (runner.ReadCheckout) for every snapshot, restore and
	// delivery of the job: a Windows runner checks files out with CRLF.
	checkout workspace.Checkout

	// The job log's fence and groups around a run (see log), and the least
	// time between two progress edits (0 is progressInterval).
	jlog          *jobLog
	progressEvery time.Duration
	publisher     *publisher // see pub
}

// Main runs the action: it reads the runner's contract, handles the event
// and reports — or, with input mode authorize, only decides whether the
// job that runs the pull request's code may follow (authorizeJob). It returns nil when the job passes; any error it returns it
// has already reported in the job log, and the CLI maps it to the exit
// code (see ErrUnsuccessful and UsageError).
func Main(ctx context.Context, env Env) error {
	a := githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(env.Stdout))
	logVersion(env)
	j, err := newJob(a, env)
	if err != nil {
		a.Errorf("%s", err)
		return badSetup(err)
	}
	if j.in.Mode == ModeAuthorize {
		err = j.authorizeJob(ctx)
	} else if j.checkout, err = runner.ReadCheckout(ctx, j.workspace, j.env.Environ); err != nil {
		err = badSetup(err)
	} else {
		err = j.handle(ctx)
	}
	var cerr *loop.ConfigError
	switch {
	case errors.As(err, &cerr):
		j.pub().annotateConfig(cerr)
	case err != nil && !errors.Is(err, ErrUnsuccessful):
		a.Errorf("%s", j.mask(err.Error()))
	}
	return err
}

// logVersion says which loop-action runs, and which action reference the
// workflow asked for (GITHUB_ACTION_REPOSITORY@GITHUB_ACTION_REF, when the
// runner sets them).
func logVersion(env Env) {
	line := "loop-action " + cmp.Or(env.Version, "(unknown version)")
	if repo, ref := env.Getenv("GITHUB_ACTION_REPOSITORY"), env.Getenv("GITHUB_ACTION_REF"); repo != "" || ref != "" {
		line += fmt.Sprintf(" (uses: %s@%s)", cmp.Or(repo, "?"), cmp.Or(ref, "?"))
	}
	fmt.Fprintln(env.Stdout, line)
}

func newJob(a *githubactions.Action, env Env) (*job, error) {
	in, err := readInputs(a)
	if err != nil {
		return nil, err
	}
	for _, t := range []string{in.Token, in.PushToken} {
		if t != "" {
			a.AddMask(t)
		}
	}
	if t := env.Getenv("ACTIONS_RUNTIME_TOKEN"); t != "" {
		a.AddMask(t)
	}
	gctx, err := readContext(env.Getenv)
	if err != nil {
		return nil, err
	}
	j := &job{a: a, env: env, in: in, ctx: gctx, workspace: cmp.Or(gctx.Workspace, "/github/workspace"), git: env.Git}
	j.owner, j.repo = gctx.Repo()
	if j.owner == "" || j.repo == "" {
		return nil, errors.New("GITHUB_REPOSITORY is unset or not owner/repo")
	}
	if in.Token != "" {
		c, err := github.New(gctx.APIURL, in.Token, github.WithUserAgent("loop-action/"+env.Version))
		if err != nil {
			return nil, err
		}
		j.client = c // never a nil *Client: j.client == nil means no token
	}
	j.env.Environ = agentEnviron(env.Environ)
	if in.Mode == ModeAuthorize {
		return j, nil // the job has no checkout, and nothing of the workspace is opened
	}
	j.trustWorkspace()
	j.warnCredentials()
	return j, nil
}

// agentEnviron is the environment agents and checks get: the job's,
// without the action's inputs (the token among them) and the runtime's
// credentials, which no agent needs.
func agentEnviron(env []string) []string {
	return environ.Env(env).WithoutFunc(func(k string) bool {
		return strings.HasPrefix(k, "INPUT_") || strings.HasPrefix(k, "ACTIONS_RUNTIME_") ||
			strings.HasPrefix(k, "ACTIONS_ID_TOKEN_") || k == "ACTIONS_RESULTS_URL"
	})
}

// trustWorkspace lets git work in the workspace, which the runner's user
// owns while the container runs as root (checks and agents may run git).
func (j *job) trustWorkspace() {
	cmd := exec.Command("git", "config", "--global", "--add", "safe.directory", j.workspace)
	cmd.Env = j.env.Environ
	_ = cmd.Run()
}

// handle dispatches on the event.
func (j *job) handle(ctx context.Context) error {
	switch j.ctx.EventName {
	case "pull_request":
		return j.pullRequest(ctx)
	case "issue_comment":
		return j.issueComment(ctx)
	case "schedule", "workflow_dispatch":
		return j.branch(ctx)
	}
	return badSetup(fmt.Errorf("event %q is not handled: trigger loop-action on pull_request, issue_comment, schedule or workflow_dispatch", j.ctx.EventName))
}

// workspaceConfig loads the loop config from the workspace: a branch's
// run, or a pull request's when allow-head-config is on.
func (j *job) workspaceConfig() (*loop.Config, error) {
	src, err := loop.ReadSource(filepath.Join(j.workspace, filepath.FromSlash(j.in.Config)))
	if err != nil {
		return nil, fmt.Errorf("read the loop config %q: %w", j.in.Config, err)
	}
	return loop.Parse(j.in.Config, src)
}

// configAt loads a pull request's loop config at ref, its base commit,
// through the API: the pull request's own copy is not trusted. Only
// allow-head-config reads the workspace instead; without a ref or a token
// it fails rather than fall back on the head's copy.
func (j *job) configAt(ctx context.Context, ref string) (*loop.Config, error) {
	switch {
	case j.in.AllowHeadConfig:
		return j.workspaceConfig()
	case j.client == nil:
		return nil, errors.New("input github-token is empty: a pull request's loop config is read from its base commit through the API, never from the pull request itself")
	case ref == "":
		return nil, errors.New("no base commit to read the loop config from: a pull request's own copy is not trusted")
	}
	src, err := j.client.FileAt(ctx, j.owner, j.repo, j.in.Config, ref)
	if err != nil {
		return nil, fmt.Errorf("read the loop config from the base commit (the pull request's own copy is not trusted): %w", err)
	}
	return loop.Parse(j.in.Config, src)
}

// annotateConfig turns config diagnostics into error annotations at the
// file, line and column.
func (p *publisher) annotateConfig(cerr *loop.ConfigError) {
	for _, d := range cerr.Diagnostics {
		fields := map[string]string{"file": d.Pos.File, "title": "loop config"}
		if d.Pos.Line > 0 {
			fields["line"], fields["col"] = fmt.Sprint(d.Pos.Line), fmt.Sprint(d.Pos.Col)
		}
		if d.Severity == loop.Warning {
			p.a.WithFieldsMap(fields).Warningf("%s", d.Message)
		} else {
			p.a.WithFieldsMap(fields).Errorf("%s", d.Message)
		}
	}
}

// mask hides the tokens in text that reaches the log.
func (j *job) mask(s string) string {
	for _, t := range []string{j.in.Token, j.in.PushToken} {
		if t != "" {
			s = strings.ReplaceAll(s, t, "***")
		}
	}
	return s
}

// What Main returns, for the CLI to map to its exit codes (it is the only
// place that maps errors to exit codes): nil for success and for a pause
// for review, ErrUnsuccessful, a *UsageError or a *loop.ConfigError for
// what the job's setup got wrong, and any other error for an internal
// failure.

// ErrUnsuccessful reports a run that stopped without success while
// fail-on-unsuccessful is on: the job fails, without an error of its own.
var ErrUnsuccessful = errors.New("the loop stopped without success")

// UsageError is a mistake in how the job is set up rather than a failure
// of the action: an input, the event, where the loop config is.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// badSetup marks err as a mistake in the job's setup.
func badSetup(err error) error { return &UsageError{Err: err} }

// unsuccessful is the job's result: a commit certified in this job (the
// status rule's success), a pause for review, and a job that refuted
// nothing (see delivery.keep) pass; anything else fails when
// fail-on-unsuccessful is on — a run that converged but whose fix no
// commit carries yet among them.
func (in Inputs) unsuccessful(out runner.Outcome, dv delivery) error {
	if dv.success || dv.keep || out.Status == state.AwaitingReview || !in.FailOnUnsuccessful {
		return nil
	}
	return ErrUnsuccessful
}

// githubAPI is all the action asks of GitHub's REST API: the seam between
// its decisions and GitHub. *github.Client implements it over HTTP; the
// decision tests run it against githubfake, the one GitHub fake, which its
// own tests hold to go-github's reading of GitHub's wire format.
//
// Every method names the repository and means what the client's method
// of that name documents. What it reads (the pull request, the base's
// loop config, comments, permissions) is data to the action, never
// instructions: the decisions on it are the action's, and an
// implementation adds none.
type githubAPI interface {
	// What it reads.
	PullRequest(ctx context.Context, owner, repo string, n int) (github.PR, error)
	FileAt(ctx context.Context, owner, repo, path, ref string) ([]byte, error)
	Permission(ctx context.Context, owner, repo, user string) (string, error)
	Comments(ctx context.Context, owner, repo string, n int) ([]github.Comment, error) // oldest (lowest id) first
	LatestStatus(ctx context.Context, owner, repo, sha, statusContext string) (github.Status, error)

	// What it writes.
	Comment(ctx context.Context, owner, repo string, n int, body string) (int64, error)
	React(ctx context.Context, owner, repo string, commentID int64, content string) error
	UpsertSticky(ctx context.Context, owner, repo string, n int, marker, body, botLogin string) (int64, error)
	SetStatus(ctx context.Context, owner, repo, sha, state, statusContext, description, targetURL string) error
	OpenPullFor(ctx context.Context, owner, repo, head string) (int, error)
	CreatePull(ctx context.Context, owner, repo, head, base, title, body string) (int, error)
	EditPull(ctx context.Context, owner, repo string, n int, title, body string) error
}

var _ githubAPI = (*github.Client)(nil)
