package action

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

// withDeliver sets the deliver input.
func withDeliver(mode string) func(*Inputs) { return func(in *Inputs) { in.Deliver = mode } }

// TestAgentChangingWorkflowsIsNotPushed: a hostile agent that fixes the
// bug and also rewrites .github/workflows/ci.yml gets the change
// certified (the gate measures the workspace), but no commit is pushed —
// one without the workflow would not be the certified tree, one with it
// is not allowed — and the diff is posted instead; the head keeps
// failure. With [deliver] allow_workflows the same change is pushed.
func TestAgentChangingWorkflowsIsNotPushed(t *testing.T) {
	t.Parallel()
	agent := fixer("mkdir -p .github/workflows && printf 'on: push\\njobs: {steal: {runs-on: x}}\\n' >.github/workflows/ci.yml\n")
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprint("allow_workflows=", allow), func(t *testing.T) {
			t.Parallel()
			config := deliverLoop + fmt.Sprintf("[deliver]\nallow_workflows = %t\n", allow)
			f := newFlow(t, config, agent)
			head := f.head
			res := f.pr(nil)
			pushes := f.git.tried()
			if allow {
				if res.err != nil || len(pushes) != 1 || f.git.get(pushes[0].SHA).Files[".github/workflows/ci.yml"] == "" {
					t.Fatalf("allowed: %v, pushes %+v\n%s", res.err, pushes, res.log)
				}
				return
			}
			if !errors.Is(res.err, ErrUnsuccessful) || len(pushes) != 0 || f.git.refs["refs/heads/feature"] != head {
				t.Fatalf("job %v, pushes %+v", res.err, pushes)
			}
			if got := f.statuses(); got[len(got)-1] != head[:7]+" failure: fix touches .github/workflows/ci.yml: not pushed" {
				t.Errorf("statuses %q", got)
			}
			s := f.sticky()
			for _, want := range []string{"Not pushed: the certified change touches `.github/workflows/ci.yml`", "+jobs: {steal: {runs-on: x}}", "+\techo $(($1 + $2))", "loop-action apply --run-id demo/pr-7"} {
				if !strings.Contains(s, want) {
					t.Errorf("the sticky comment lacks %q:\n%s", want, s)
				}
			}
			if cp := f.checkpoint("demo/pr-7"); cp.Delivery == nil || cp.Delivery.Outcome != outcomeRefused {
				t.Errorf("recorded delivery %+v, want refused", cp.Delivery)
			}
		})
	}
}

// TestSecretIsNeverDelivered: a hostile agent writes the provider's key,
// base64-encoded, into a file (and into a file's name), or the job's own
// github-token (which it found somewhere): nothing is pushed
// and no diff is posted, the comment names the path, and the value shows
// nowhere — not in the comment, the job summary, the log or a commit.
func TestSecretIsNeverDelivered(t *testing.T) {
	t.Parallel()
	const key = "sk-live-0123456789abcdef"
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	config := strings.Replace(deliverLoop, `command = ["sh", "agents/fixer.sh"]`, "command = [\"sh\", \"agents/fixer.sh\"]\nenv = [\"API_KEY\"]", 1)
	for _, tc := range []struct{ name, agent, path string }{
		{"in a file", "printf %s \"$API_KEY\" | base64 >leak.txt\n", "leak.txt"},
		{"in a name", "printf x >\"note-$API_KEY.txt\"\n", "note-***.txt"},
		{"the job's token in a file", "printf %s ghs_github-token-0123456789 | base64 >leak.txt\n", "leak.txt"},
	} {
		for _, mode := range []string{DeliverPush, DeliverComment} {
			t.Run(tc.name+", "+mode, func(t *testing.T) {
				t.Parallel()
				f := newFlow(t, config, fixer(tc.agent))
				f.environ = append(f.environ, "API_KEY="+key)
				res := f.pr(withDeliver(mode))
				if !errors.Is(res.err, ErrUnsuccessful) || len(f.git.tried()) != 0 {
					t.Fatalf("job %v, pushes %+v\n%s", res.err, f.git.tried(), res.log)
				}
				s := f.sticky()
				if !strings.Contains(s, "holds the value of a secret") || strings.Contains(s, "<details>") {
					t.Errorf("the sticky comment:\n%s", s)
				}
				if got := f.statuses(); got[len(got)-1] != f.head[:7]+" failure: fix not delivered: a file holds a secret" {
					t.Errorf("statuses %q", got)
				}
				if !strings.Contains(s, "`"+tc.path+"`") {
					t.Errorf("the sticky comment does not name %s:\n%s", tc.path, s)
				}
				for where, text := range map[string]string{"comment": s, "summary": res.summary, "log": res.log, "outputs": fmt.Sprint(res.outputs)} {
					for _, form := range []string{key, b64, strings.TrimRight(b64, "=")} {
						if unmasked(text, form) { // the log's ::add-mask:: line is how the runner is told to hide it
							t.Errorf("the %s shows the key:\n%s", where, text)
						}
					}
				}
			})
		}
	}
}

// TestCommentModePostsTheDiff: deliver: comment pushes nothing; the diff
// is in the sticky comment, collapsed, in a fence longer than any run of
// backticks an agent wrote (so nothing it wrote renders or ends the
// block), with the command that applies it. The head keeps failure.
func TestCommentModePostsTheDiff(t *testing.T) {
	t.Parallel()
	hostile := "printf '%s\\n' '````' '</details>' '@octocat <img src=x onerror=alert(1)>' '/loop approve' >NOTES.md\n"
	f := newFlow(t, deliverLoop, fixer(hostile))
	res := f.pr(withDeliver(DeliverComment))
	if !errors.Is(res.err, ErrUnsuccessful) || len(f.git.tried()) != 0 || res.outputs["success"] != "false" {
		t.Fatalf("job %v, pushes %+v, outputs %v", res.err, f.git.tried(), res.outputs)
	}
	s := f.sticky()
	open := strings.Index(s, "<details><summary>The certified change</summary>\n\n`````diff\n")
	end := strings.Index(s, "\n`````\n\n</details>")
	if open < 0 || end < open || !strings.Contains(s[open:end], "+</details>\n+@octocat <img") {
		t.Fatalf("the diff is not fenced as it should be:\n%s", s)
	}
	if !strings.Contains(s[end:], "```sh\nloop-action apply --run-id demo/pr-7 --state branch:loop-state --remote https://github.com/octo-org/demo.git\n```") {
		t.Errorf("no apply command after the diff:\n%s", s[end:])
	}
	if got := f.statuses(); got[len(got)-1] != f.head[:7]+" failure: fix posted as a diff in the comment" {
		t.Errorf("statuses %q", got)
	}
}

// TestNoneAndForkDeliverNothing: deliver: none keeps the fix on the state
// branch; a fork's pull request is only gate-checked, whatever deliver
// says.
func TestNoneAndForkDeliverNothing(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	res := f.pr(withDeliver(DeliverNone))
	if !errors.Is(res.err, ErrUnsuccessful) || len(f.git.tried()) != 0 {
		t.Fatalf("none: %v, pushes %+v", res.err, f.git.tried())
	}
	if got := f.statuses(); !strings.HasSuffix(got[len(got)-1], "not delivered (deliver: none)") {
		t.Errorf("none: statuses %q", got)
	}

	fork := newFlow(t, deliverLoop, fixer(""))
	ev := prEvent(fork.head)
	ev["pull_request"].(map[string]any)["head"].(map[string]any)["repo"] = map[string]any{"full_name": "mallory/" + repo}
	ev["pull_request"].(map[string]any)["base"].(map[string]any)["sha"] = fork.base
	res = fork.job("pull_request", ev, fork.head, withDeliver(DeliverPush))
	if !errors.Is(res.err, ErrUnsuccessful) || res.outputs["stop-reason"] != "gate-only" {
		t.Fatalf("fork: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	if fork.ran() != 0 || len(fork.git.tried()) != 0 || len(fork.gh.AllStatuses(owner, repo)) != 0 {
		t.Errorf("fork: agent %d, pushes %+v, statuses %q", fork.ran(), fork.git.tried(), fork.statuses())
	}
}

// TestScheduleOpensOnePullRequest: a scheduled run pushes its certified
// work to loop/demo (never main) and opens one pull request into main; the
// next scheduled run (main moved on) pushes over loop/demo with a
// compare-and-swap on its tip and updates that pull request.
func TestScheduleOpensOnePullRequest(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	res := f.schedule(nil)
	if res.err != nil || res.outputs["pull-request"] != "8" || res.outputs["delivered-ref"] != "loop/demo" {
		t.Fatalf("first run: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	first := f.git.refs["refs/heads/loop/demo"]
	files := f.git.get(f.base).Files
	files["CHANGELOG.md"] = "more\n"
	f.git.refs["refs/heads/main"] = f.git.commit(f.base, files, "main moves on")
	main := f.git.refs["refs/heads/main"]
	res = f.schedule(nil)
	if res.err != nil || res.outputs["pull-request"] != "8" {
		t.Fatalf("second run: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	var loopPulls []string
	for _, pr := range f.gh.Pulls(owner, repo) {
		if pr.HeadRef == "loop/demo" {
			loopPulls = append(loopPulls, fmt.Sprintf("#%d %s→%s", pr.Number, pr.HeadRef, pr.BaseRef))
			if !strings.Contains(pr.Body, "**Fixed in "+f.git.refs["refs/heads/loop/demo"][:7]) {
				t.Errorf("the pull request's body is not the second run's report:\n%s", pr.Body)
			}
		}
	}
	if diff := cmp.Diff([]string{"#8 loop/demo→main"}, loopPulls); diff != "" {
		t.Errorf("pull requests from loop/demo (-want +got):\n%s", diff)
	}
	pushes := f.git.tried()
	want := []memPush{{Ref: "refs/heads/loop/demo", Old: "", SHA: first, Token: "ghs_github-token-0123456789"},
		{Ref: "refs/heads/loop/demo", Old: first, SHA: f.git.refs["refs/heads/loop/demo"], Token: "ghs_github-token-0123456789"}}
	if diff := cmp.Diff(want, pushes); diff != "" {
		t.Errorf("pushes (-want +got):\n%s", diff)
	}
	if f.git.refs["refs/heads/main"] != main {
		t.Error("main was pushed to")
	}
	last := f.gh.AllStatuses(owner, repo)[len(f.gh.AllStatuses(owner, repo))-1]
	if last.SHA != f.git.refs["refs/heads/loop/demo"] || last.State != "success" {
		t.Errorf("last status %+v, want success on the delivered commit", last)
	}
}

// TestPartialWorkIsKept: with [deliver] partial, a run that stops at its
// budget pushes its workspace to loop-partial/<run id> — never the pull
// request's branch — leaving out what a delivery never pushes, and the
// comment links it and says why the run stopped.
func TestPartialWorkIsKept(t *testing.T) {
	t.Parallel()
	agent := "cat >/dev/null\necho ran >>\"$AGENT_LOG\"\necho wip >wip.txt\nmkdir -p .github/workflows && echo x >.github/workflows/x.yml\n"
	f := newFlow(t, strings.Replace(deliverLoop, "max_iterations = 2", "max_iterations = 1", 1)+"[deliver]\npartial = true\n", agent)
	head := f.head
	res := f.pr(nil)
	if !errors.Is(res.err, ErrUnsuccessful) || res.outputs["stop-reason"] != "iteration-cap" {
		t.Fatalf("job %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	pushes := f.git.tried()
	if len(pushes) != 1 || pushes[0].Ref != "refs/heads/loop-partial/demo/pr-7" || pushes[0].Old != "" {
		t.Fatalf("pushes %+v", pushes)
	}
	c := f.git.get(pushes[0].SHA)
	if c.Files["wip.txt"] != "wip\n" || c.Files[".github/workflows/x.yml"] != "" || c.Parent != head {
		t.Errorf("the partial commit: %+v", c)
	}
	if f.git.refs["refs/heads/feature"] != head {
		t.Error("the pull request's branch moved")
	}
	if got := f.statuses(); got[len(got)-1] != head[:7]+" failure: iteration-cap after 1 iterations: 1 of 1 iterations used; work kept on loop-partial/demo/pr-7" {
		t.Errorf("statuses %q", got)
	}
	if s := f.sticky(); !strings.Contains(s, "is kept on [`loop-partial/demo/pr-7`](https://github.com/octo-org/demo/tree/loop-partial/demo/pr-7)") ||
		!strings.Contains(s, "Left out of it: `.github/workflows/x.yml`") {
		t.Errorf("the sticky comment:\n%s", s)
	}
	for _, st := range f.statuses() {
		if strings.Contains(st, "success") {
			t.Errorf("a status says success: %s", st)
		}
	}
}

// TestTokensNeverLeak: pushes use push-token; neither token shows in the
// log, the comment, the job summary, an output or a commit — not even
// when the push fails with an error that carries one.
func TestTokensNeverLeak(t *testing.T) {
	t.Parallel()
	const push = "ghp_push-token-abcdef0123456789"
	f := newFlow(t, deliverLoop, fixer(""))
	f.git.failing["Push"] = fmt.Errorf("remote: denied to https://x-access-token:%s@github.com/octo-org/demo.git", push)
	res := f.pr(func(in *Inputs) { in.PushToken = push })
	pushes := f.git.tried()
	if !errors.Is(res.err, ErrUnsuccessful) || len(pushes) != 1 || pushes[0].Token != push {
		t.Fatalf("job %v, pushes %+v", res.err, pushes)
	}
	if !strings.Contains(f.sticky(), "x-access-token:***@") {
		t.Errorf("the push's error is not in the comment, masked:\n%s", f.sticky())
	}
	texts := map[string]string{"log": res.log, "comment": f.sticky(), "summary": res.summary, "outputs": fmt.Sprint(res.outputs), "statuses": fmt.Sprint(f.statuses())}
	for sha, c := range f.git.commits {
		texts["commit "+sha[:7]] = c.Message + fmt.Sprint(c.Files)
	}
	for where, text := range texts {
		for _, token := range []string{push, "ghs_github-token-0123456789"} {
			if strings.Contains(text, token) {
				t.Errorf("the %s shows a token", where)
			}
		}
	}
}

// TestNothingPushedUnlessRecordedFirst: the delivery in flight is recorded
// on the state branch before the push; when that save fails, nothing is
// pushed (a generation delivers at most once, and the next job must know
// the commit).
func TestNothingPushedUnlessRecordedFirst(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	f.failSave = func(cp *state.Checkpoint) error {
		if cp.Delivery != nil && cp.Delivery.Outcome == outcomePushing {
			return errors.New("the state branch moved")
		}
		return nil
	}
	res := f.pr(nil)
	if !errors.Is(res.err, ErrUnsuccessful) || len(f.git.tried()) != 0 {
		t.Fatalf("job %v, pushes %+v", res.err, f.git.tried())
	}
	if got := f.statuses(); got[len(got)-1] != f.head[:7]+" failure: fix certified, not pushed: the state branch could not be written" {
		t.Errorf("statuses %q", got)
	}
}

// TestDeliveryTargets: where each deliver mode pushes, and where it never
// does: pull-request on a pull request goes to a loop branch with a pull
// request into the PR's branch; push on a branch's run goes onto that
// branch, but never onto the default branch; a pull request whose head is
// the default branch is never pushed to; comment on a branch's run puts
// the diff in the job summary.
func TestDeliveryTargets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		job     func(f *flow) jobResult
		pushes  []string // "ref old-is-head"
		status  string   // the last status's description, suffix
		summary string   // in the job summary
	}{
		{name: "pull-request on a pull request",
			job:    func(f *flow) jobResult { return f.pr(withDeliver(DeliverPullRequest)) },
			pushes: []string{"refs/heads/loop/demo-pr-7 absent"}, status: "failure: fix in pull request #8"},
		{name: "push on the default branch's run",
			job:    func(f *flow) jobResult { return f.schedule(withDeliver(DeliverPush)) },
			status: "", summary: "loop-action never pushes to the default branch `main`"},
		{name: "push on another branch's run",
			job: func(f *flow) jobResult {
				f.refName, f.git.refs["refs/heads/dev"] = "dev", f.base
				return f.job("workflow_dispatch", map[string]any{"repository": map[string]any{"default_branch": "main"}}, f.base, withDeliver(DeliverPush))
			},
			pushes: []string{"refs/heads/dev head"}, status: "success: certified: snapshot"},
		{name: "a pull request from the default branch",
			job: func(f *flow) jobResult {
				ev := prEvent(f.head)
				ev["pull_request"].(map[string]any)["head"].(map[string]any)["ref"] = "main"
				return f.job("pull_request", ev, f.head, nil)
			},
			status: "failure: fix certified, not pushed: loop-action never pushes to the default branch `main` (use `deliver: pull-request`)"},
		{name: "comment on a branch's run",
			job:     func(f *flow) jobResult { return f.schedule(withDeliver(DeliverComment)) },
			summary: "<details><summary>The certified change</summary>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFlow(t, deliverLoop, fixer(""))
			res := tt.job(f)
			var got []string
			for _, p := range f.git.tried() {
				old := "absent"
				if p.Old == f.head || p.Old == f.base {
					old = "head"
				}
				got = append(got, p.Ref+" "+old)
			}
			if diff := cmp.Diff(tt.pushes, got); diff != "" {
				t.Errorf("pushes (-want +got):\n%s\n%s", diff, res.log)
			}
			st := f.statuses()
			if tt.status != "" && (len(st) == 0 || !strings.Contains(st[len(st)-1], tt.status)) {
				t.Errorf("statuses %q, want the last with %q", st, tt.status)
			}
			if !strings.Contains(res.summary, tt.summary) {
				t.Errorf("the job summary lacks %q:\n%s", tt.summary, res.summary)
			}
		})
	}
}

// TestEnvTableSecretIsMaskedInTheJobLog: a provider env table value that
// looks like a secret (secret.Looks) is masked like an array's
// variables: the job tells the runner to hide it (::add-mask::) before
// anything runs, so an agent that prints it shows *** in the job log.
func TestEnvTableSecretIsMaskedInTheJobLog(t *testing.T) {
	t.Parallel()
	const key = "sk-gateway-0123456789abcdef"
	config := strings.Replace(deliverLoop, `command = ["sh", "agents/fixer.sh"]`, "command = [\"sh\", \"agents/fixer.sh\"]\nenv = { GATEWAY_KEY = \""+key+"\" }", 1)
	f := newFlow(t, config, fixer(""))
	res := f.pr(withDeliver(DeliverNone))
	if !strings.Contains(res.log, "::add-mask::"+key+"\n") {
		t.Errorf("the job log has no add-mask command for the env table's key:\n%s", res.log)
	}
	if unmasked(res.log, key) {
		t.Errorf("the job log shows the key:\n%s", res.log)
	}
}
