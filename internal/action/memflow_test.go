package action

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// A flow is pull request #7 (feature → main) of the demo repository, or
// its default branch, through several jobs of the action, in memory:
// githubfake for GitHub, memGit for git, a dir: store that keeps each
// run's workspace like the state branch does, and a real runner with a
// scripted agent in a fresh checkout per job. The jobs go through
// job.handle, as Main's do, with everything but the process around them.
type flow struct {
	t        *testing.T
	gh       *githubfake.Server
	api      *github.Client // the jobs' client
	git      *memGit
	states   string // the dir: store's directory
	spaces   *spaces
	agentLog string // the agent appends a line per call
	base     string // main
	head     string // the pull request's head
	environ  []string
	failSave func(*state.Checkpoint) error // a save the store refuses
	refName  string                        // GITHUB_REF_NAME of a branch's run; "" is main
	tune     func(*job)                    // changes a job before it runs (its clock, its client)
}

// deliverLoop's agent fixes calc.sh; its one goal is that test.sh passes.
const deliverLoop = `name = "demo"
[stop]
max_iterations = 2
max_wall_clock = "5m"
[protect]
paths = ["test.sh", "agents/**"]
[providers.script]
command = ["sh", "agents/fixer.sh"]
[[node]]
name = "fixer"
provider = "script"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
`

// fixer is the agent: it counts its calls, fixes calc.sh and then does
// what extra says (a hostile agent's doings).
func fixer(extra string) string {
	return "cat >/dev/null\necho ran >>\"$AGENT_LOG\"\n" +
		"sed 's/\\$1 - \\$2/$1 + $2/' calc.sh >calc.sh.tmp && mv calc.sh.tmp calc.sh\n" + extra
}

const (
	buggyCalc = "add() {\n\techo $(($1 - $2))\n}\n"
	fixedCalc = "add() {\n\techo $(($1 + $2))\n}\n"
	calcTest  = ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"--- FAIL: add 2 3: got $(add 2 3), want 5\"; exit 1; }\n"
)

func newFlow(t *testing.T, config, agent string) *flow {
	t.Helper()
	f := &flow{t: t, git: newMemGit(t), states: t.TempDir(), spaces: &spaces{m: map[string]map[string]string{}},
		agentLog: filepath.Join(t.TempDir(), "agent.log")}
	f.gh, f.api = newGitHub(t)
	f.environ = append(os.Environ(), "AGENT_LOG="+f.agentLog)
	files := map[string]string{"calc.sh": buggyCalc, "test.sh": calcTest, "agents/fixer.sh": agent,
		".github/loop.toml": config, ".gitignore": ".loop/\n"}
	f.base = f.git.commit("", files, "demo")
	files["README.md"] = "# demo\n"
	f.head = f.git.commit(f.base, files, "readme")
	f.git.refs["refs/heads/main"], f.git.refs["refs/heads/feature"] = f.base, f.head
	f.gh.AddFile(owner, repo, f.base, ".github/loop.toml", []byte(config))
	f.gh.SetPermission(owner, repo, "writer", "write")
	f.gh.SetPermission(owner, repo, "reader", "read")
	f.setHead(f.head)
	return f
}

// setHead moves the pull request's head to sha, as a push to feature does.
func (f *flow) setHead(sha string) {
	f.head = sha
	f.git.mu.Lock()
	f.git.refs["refs/heads/feature"] = sha
	f.git.mu.Unlock()
	f.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, Title: "Fix add()", Author: "writer", HeadSHA: sha, BaseSHA: f.base})
}

// ran is how many times the agent ran.
func (f *flow) ran() int {
	b, _ := os.ReadFile(f.agentLog)
	return strings.Count(string(b), "ran\n")
}

// jobResult is what one job left.
type jobResult struct {
	err       error
	log       string
	outputs   map[string]string
	summary   string
	workspace string
}

// prEvent is the pull_request event for head sha of #7.
func prEvent(sha string) map[string]any {
	repoObj := map[string]any{"full_name": owner + "/" + repo}
	return map[string]any{"action": "synchronize", "number": float64(7), "pull_request": map[string]any{
		"number": float64(7), "head": map[string]any{"sha": sha, "ref": "feature", "repo": repoObj},
		"base": map[string]any{"sha": "", "ref": "main", "repo": repoObj}},
		"repository": map[string]any{"full_name": owner + "/" + repo, "default_branch": "main"}}
}

// pr runs a pull_request job on the pull request's head.
func (f *flow) pr(in func(*Inputs)) jobResult {
	f.t.Helper()
	return f.job("pull_request", prEvent(f.head), f.head, in)
}

// comment writes body on #7 as user and runs the issue_comment job.
func (f *flow) comment(user, body string, in func(*Inputs)) (int64, jobResult) {
	f.t.Helper()
	id := f.gh.AddComment(owner, repo, 7, user, "User", body)
	ev := map[string]any{"action": "created", "issue": map[string]any{"number": float64(7), "pull_request": map[string]any{"url": "u"}},
		"comment":    map[string]any{"id": float64(id), "body": body, "user": map[string]any{"login": user, "type": "User"}},
		"repository": map[string]any{"default_branch": "main"}}
	return id, f.job("issue_comment", ev, f.head, in)
}

// schedule runs a scheduled job on main's tip.
func (f *flow) schedule(in func(*Inputs)) jobResult {
	f.t.Helper()
	f.git.mu.Lock()
	tip := f.git.refs["refs/heads/main"]
	f.git.mu.Unlock()
	return f.job("schedule", map[string]any{"schedule": "17 3 * * *", "repository": map[string]any{"default_branch": "main"}}, tip, in)
}

// job runs the action on one event in a fresh checkout of sha.
func (f *flow) job(event string, ev map[string]any, sha string, in func(*Inputs)) jobResult {
	f.t.Helper()
	ws := f.git.checkout(sha)
	commands := f.t.TempDir()
	env := map[string]string{"GITHUB_OUTPUT": filepath.Join(commands, "set_output"), "GITHUB_STEP_SUMMARY": filepath.Join(commands, "step_summary")}
	for _, p := range env {
		writeFile(f.t, p, "")
	}
	getenv := func(k string) string { return env[k] }
	var log bytes.Buffer
	j := &job{
		a:   githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&log)),
		env: Env{Getenv: getenv, Environ: agentEnviron(f.environ), Stdout: &log, Now: time.Now, Version: "test"},
		in: Inputs{Config: ".github/loop.toml", Token: "ghs_github-token-0123456789", StateBranch: "loop-state", Bot: bot,
			Comment: true, FailOnUnsuccessful: true, UploadExport: true, Deliver: DeliverAuto},
		ctx:   &githubactions.GitHubContext{EventName: event, Event: ev, ServerURL: "https://github.com", RunID: 4242, SHA: sha, RefName: cmp.Or(f.refName, "main")},
		owner: owner, repo: repo, workspace: ws, client: f.api, git: f.git,
	}
	j.stores = func(context.Context) (state.Store, error) { return f.store(ws) }
	if in != nil {
		in(&j.in)
	}
	if f.tune != nil {
		f.tune(j)
	}
	err := j.handle(context.Background())
	summary, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	return jobResult{err: err, log: log.String(), outputs: outputs(f.t, commands), summary: string(summary), workspace: ws}
}

// checkpoint is the run's checkpoint in the store, or nil.
func (f *flow) checkpoint(runID string) *state.Checkpoint {
	f.t.Helper()
	d, err := state.OpenDir(f.states)
	if err != nil {
		f.t.Fatal(err)
	}
	defer d.Close()
	cp, err := d.Load(context.Background(), runID)
	if err != nil {
		return nil
	}
	return cp
}

// statuses are the loop/demo statuses set, as "sha7 state: description".
func (f *flow) statuses() []string {
	var out []string
	for _, s := range f.gh.AllStatuses(owner, repo) {
		out = append(out, s.SHA[:7]+" "+s.State+": "+s.Description)
	}
	return out
}

// sticky is the bot's sticky comment on #7, or "".
func (f *flow) sticky() string { return stickyOn(f.gh, 7) }

// stickyOn is the bot's sticky comment of the demo loop on n, or "".
func stickyOn(gh *githubfake.Server, n int) string {
	for _, c := range gh.Comments(owner, repo, n) {
		if c.User == bot && strings.HasPrefix(c.Body, Marker("demo")+"\n") {
			return c.Body
		}
	}
	return ""
}

// spaces are the workspaces a keeping store saved, by run id.
type spaces struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

// keepingStore is a dir: store that, like the state branch, keeps each
// checkpoint's workspace and restores it into the job's root.
type keepingStore struct {
	*state.Dir
	root   string
	spaces *spaces
	fail   func(*state.Checkpoint) error
}

var _ interface {
	Restore(ctx context.Context, runID string) (int, error)
} = (*keepingStore)(nil)

func (f *flow) store(root string) (state.Store, error) {
	d, err := state.OpenDir(f.states)
	if err != nil {
		return nil, err
	}
	return &keepingStore{Dir: d, root: root, spaces: f.spaces, fail: f.failSave}, nil
}

func (k *keepingStore) Save(ctx context.Context, cp *state.Checkpoint, c state.Commit) error {
	if k.fail != nil {
		if err := k.fail(cp); err != nil {
			return err
		}
	}
	if err := k.Dir.Save(ctx, cp, c); err != nil || c.KeepWorkspace {
		return err
	}
	files, err := readTree(k.root)
	if err != nil {
		return err
	}
	k.spaces.mu.Lock()
	defer k.spaces.mu.Unlock()
	k.spaces.m[cp.RunID] = files
	return nil
}

func (k *keepingStore) Restore(_ context.Context, runID string) (int, error) {
	k.spaces.mu.Lock()
	files := maps.Clone(k.spaces.m[runID])
	k.spaces.mu.Unlock()
	now, err := readTree(k.root)
	if err != nil {
		return 0, err
	}
	for p := range now {
		if _, keep := files[p]; !keep {
			if err := os.Remove(filepath.Join(k.root, filepath.FromSlash(p))); err != nil {
				return 0, err
			}
		}
	}
	for p, content := range files {
		full := filepath.Join(k.root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return 0, err
		}
		os.Remove(full)
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			return 0, err
		}
	}
	return len(files), nil
}
