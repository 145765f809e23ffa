package action

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Delivery end to end, where nothing may be pushed, or only somewhere
// else: hostile agents, comment mode, forks, partial work, /loop push, a
// merge-commit checkout, and the tokens.

// e2eKey is a provider's secret in the hostile tests.
const e2eKey = "sk-live-e2e-0123456789abcdef"

// secretLoop is deliverLoop whose provider holds E2E_API_KEY.
var secretLoop = strings.Replace(deliverLoop, `command = ["sh", "agents/fixer.sh"]`,
	"command = [\"sh\", \"agents/fixer.sh\"]\nenv = [\"E2E_API_KEY\"]", 1)

// TestE2EHostileAgentsPushNothing: an agent that fixes the bug and also
// writes a workflow, or the provider's key into a file, gets its change
// certified, but nothing is pushed to the remote; the comment names the
// path and says why, and the key shows nowhere: not in a comment, a
// status, the job log or summary, nor in any commit the branches reach.
// One that hides the file it fixed behind a .gitignore (the snapshot
// leaves it out, so the commit would delete it), or moves the fix into an
// ignored build/helper.sh that calc.sh sources (the commit would carry
// calc.sh, not the helper), gets nothing certified: the ignored file is
// removed before measuring, as no commit carries it, and the comment
// shows the tests failing without it.
func TestE2EHostileAgentsPushNothing(t *testing.T) {
	for _, tc := range []struct{ name, extra, path, why string }{
		{"workflow", "mkdir -p .github/workflows && printf 'on: push\\n' >.github/workflows/x.yml\n", "`.github/workflows/x.yml`", "which a delivery never pushes"},
		{"secret", "printf 'key=%s\\n' \"$E2E_API_KEY\" >leak.txt\n", "`leak.txt`", "holds the value of a secret"},
		{"hidden", "printf 'calc.sh\\n' >>.gitignore\n", "./calc.sh", "No such file"},
		{"ignored", "printf 'build/\\n' >>.gitignore\nmkdir -p build && cp calc.sh build/helper.sh\nprintf '. ./build/helper.sh\\n' >calc.sh\n",
			"./build/helper.sh", "No such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, secretLoop, tc.extra)
			refs := e.refs()
			code, log, d := e.pr(DeliverAuto, map[string]string{"E2E_API_KEY": e2eKey})
			if code != exitFailed {
				t.Fatalf("exit %d, want the job to fail\n%s", code, log)
			}
			if diff := cmp.Diff(refs, e.refs()); diff != "" || pushedBeside(e.git) != 0 {
				t.Errorf("%d pushes; the remote's branches moved (-before +after):\n%s", pushedBeside(e.git), diff)
			}
			if got := e.successes(); len(got) != 0 {
				t.Errorf("success set on %v", got)
			}
			s := e.sticky()
			if !strings.Contains(s, tc.path) || !strings.Contains(s, tc.why) {
				t.Errorf("the sticky comment does not name %s and why (%q):\n%s", tc.path, tc.why, s)
			}
			e.noSecret(e2eKey, log, d)
			if tc.name == "secret" && strings.Contains(s, "```diff") {
				t.Errorf("a diff was posted for work that holds a secret:\n%s", s)
			}
		})
	}
}

// noSecret checks that secret appears in no comment, status, log line
// (but its mask command), job summary, output, nor in any object the
// remote's branches (the state branch aside) reach.
func (e *e2eWorld) noSecret(secret, log string, d jobDirs) {
	e.t.Helper()
	var places []string
	for _, c := range e.gh.Comments(owner, repo, 7) {
		places = append(places, c.Body)
	}
	for _, s := range e.gh.AllStatuses(owner, repo) {
		places = append(places, s.Description)
	}
	for _, f := range []string{"step_summary", "set_output"} {
		places = append(places, tree(e.t, d.commands)[f])
	}
	places = append(places, e.gitCmd(e.origin, "log", "-p", "--binary", "--format=%H %an %ae %B", "--exclude=refs/heads/loop-state", "--all"))
	for i, p := range places {
		if strings.Contains(p, secret) {
			e.t.Errorf("place %d holds the secret:\n%s", i, p)
		}
	}
	if unmasked(log, secret) {
		e.t.Error("the job log holds the secret outside its add-mask command")
	}
}

// TestE2ECommentModeAndForksPushNothing: deliver: comment posts the
// certified diff with the command that applies it, and pushes nothing;
// a fork's pull request, with deliver: auto, runs no agent and pushes
// nothing either.
func TestE2ECommentModeAndForksPushNothing(t *testing.T) {
	t.Run("comment", func(t *testing.T) {
		e := newE2E(t, deliverLoop, "")
		refs := e.refs()
		code, log, _ := e.pr(DeliverComment, nil)
		if code != exitFailed {
			t.Fatalf("exit %d\n%s", code, log)
		}
		if diff := cmp.Diff(refs, e.refs()); diff != "" || pushedBeside(e.git) != 0 {
			t.Errorf("%d pushes; branches moved (-before +after):\n%s", pushedBeside(e.git), diff)
		}
		s := e.sticky()
		for _, want := range []string{"```diff", "-\techo $(($1 - $2))", "+\techo $(($1 + $2))", "loop-action apply --run-id demo/pr-7 --state branch:loop-state --remote " + e.git.URL} {
			if !strings.Contains(s, want) {
				t.Errorf("the sticky comment lacks %q:\n%s", want, s)
			}
		}
		if got := e.successes(); len(got) != 0 {
			t.Errorf("success set on %v", got)
		}
		e.applyPrinted(s)
	})
	t.Run("fork", func(t *testing.T) {
		e := newE2E(t, deliverLoop, "")
		e.gh.AddPull(owner, repo, githubfake.Pull{Number: 8, HeadSHA: e.headSHA, HeadRef: "patch-1", HeadRepo: "stranger/demo", BaseRef: "main", BaseSHA: e.baseSHA})
		refs := e.refs()
		code, log, _ := e.job("pull_request", "pull_request_fork", "feature", DeliverAuto, nil)
		if code != exitFailed || e.ran() != 0 {
			t.Fatalf("exit %d, the agent ran %d times\n%s", code, e.ran(), log)
		}
		if diff := cmp.Diff(refs, e.refs()); diff != "" || len(e.git.Pushes()) != 0 {
			t.Errorf("pushes %+v; branches moved (-before +after):\n%s", e.git.Pushes(), diff)
		}
	})
}

// TestE2EPartialWorkOnABudgetStop: with [deliver] partial = true, a run
// that stops at its iteration budget keeps its work on
// loop-partial/<run id>, a commit on the head; the pull request's branch
// and main are untouched and nothing gets success.
func TestE2EPartialWorkOnABudgetStop(t *testing.T) {
	config := strings.Replace(deliverLoop, "max_iterations = 2", "max_iterations = 1", 1) + `  [[goal.check]]
  type = "file_exists"
  path = "never.md"
[deliver]
partial = true
`
	e := newE2E(t, config, "")
	refs := e.refs()
	code, log, _ := e.pr(DeliverAuto, nil)
	if code != exitFailed {
		t.Fatalf("exit %d\n%s", code, log)
	}
	after := e.refs()
	partial := after["refs/heads/loop-partial/demo/pr-7"]
	delete(after, "refs/heads/loop-partial/demo/pr-7")
	if diff := cmp.Diff(refs, after); diff != "" || partial == "" {
		t.Fatalf("partial at %q; other branches moved (-before +after):\n%s\n%s", partial, diff, log)
	}
	if got := e.gitCmd(e.origin, "rev-parse", partial+"^"); got != e.headSHA {
		t.Errorf("the partial commit's parent is %s, want the head %s", got, e.headSHA)
	}
	if got := e.gitCmd(e.origin, "show", partial+":calc.sh"); !strings.Contains(got, "$1 + $2") {
		t.Errorf("the partial commit's calc.sh:\n%s", got)
	}
	if s := e.sticky(); !strings.Contains(s, "`loop-partial/demo/pr-7`") || !strings.Contains(s, "it is not certified") {
		t.Errorf("the sticky comment does not link the partial work:\n%s", s)
	}
	if got := e.successes(); len(got) != 0 {
		t.Errorf("success set on %v", got)
	}
}

// TestE2ELoopPushWithDeliverNone: with deliver: none the certified fix is
// kept; a writer's /loop push then pushes it onto the branch through the
// real remote, where it carries success.
func TestE2ELoopPushWithDeliverNone(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	head := e.headSHA
	if code, log, _ := e.pr(DeliverNone, nil); code != exitFailed || pushedBeside(e.git) != 0 {
		t.Fatalf("exit %d, %d pushes\n%s", code, pushedBeside(e.git), log)
	}
	id := e.gh.AddComment(owner, repo, 7, "writer", "User", "/loop push")
	in := map[string]string{"INPUT_DELIVER": DeliverNone, "AGENT_LOG": e.agentLog}
	d := e.jobDirs("feature")
	code, log := inProcess(t, e.world, d, "issue_comment", e.event(d.workflow, "issue_comment_created",
		map[string]string{"body": "/loop push", "user": "writer", "id": itoa(id)}), in)
	if code != exitOK {
		t.Fatalf("/loop push exited %d\n%s", code, log)
	}
	tip := e.refs()["refs/heads/feature"]
	if tip == head || e.gitCmd(e.origin, "rev-parse", tip+"^") != head {
		t.Fatalf("feature is at %s, want one commit on %s", tip, head)
	}
	if got := e.checkoutSnapshot("feature"); got != e.checkpoint().Snapshot {
		t.Errorf("a checkout of the pushed commit is %s, not the certified %s", got, e.checkpoint().Snapshot)
	}
	if diff := cmp.Diff([]string{tip}, e.successes()); diff != "" || e.ran() != 1 {
		t.Errorf("the agent ran %d times; commits with success (-want +got):\n%s", e.ran(), diff)
	}
}

// TestE2EMergeCommitCheckoutExits2: a pull request's job that checked
// out GitHub's merge commit (actions/checkout's default) exits 2 with the
// fix, before any agent runs or anything is pushed.
func TestE2EMergeCommitCheckoutExits2(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	seed := filepath.Join(e.dir, "seed")
	e.gitCmd(seed, "checkout", "-q", "-b", "merge", "main")
	e.gitCmd(seed, "merge", "-q", "--no-ff", "-m", "Merge feature into main", "feature")
	e.gitCmd(seed, "push", "-q", e.origin, "merge:refs/heads/pull-7-merge")
	refs := e.refs()
	code, log, _ := e.job("pull_request", "pull_request_opened", "pull-7-merge", DeliverAuto, nil)
	if code != exitConfig || !strings.Contains(log, "ref: ${{ github.event.pull_request.head.sha }}") {
		t.Fatalf("exit %d, want 2 with the fix\n%s", code, log)
	}
	if diff := cmp.Diff(refs, e.refs()); diff != "" || e.ran() != 0 || pushedBeside(e.git) != 0 {
		t.Errorf("the agent ran %d times, %d pushes; branches moved:\n%s", e.ran(), pushedBeside(e.git), diff)
	}
}

// TestE2ETokensNeverLeak: with a push-token, the delivery is pushed with
// it (the state branch with github-token), and neither token appears in
// the job log, comments, statuses, the summary, the outputs, the export,
// nor in any object on the remote (the state branch included).
func TestE2ETokensNeverLeak(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	code, log, d := e.pr(DeliverAuto, map[string]string{"INPUT_PUSH-TOKEN": e.pushWith})
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, log)
	}
	for _, p := range e.git.Pushes() {
		want := e.token
		if slices.Contains(p.Refs, "refs/heads/feature") {
			want = e.pushWith
		}
		if p.Token != want {
			t.Errorf("the push of %v came with the wrong token", p.Refs)
		}
	}
	objects := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	objects.Dir = e.origin
	all, err := objects.Output()
	if err != nil {
		t.Fatal(err)
	}
	exported := tree(t, filepath.Join(d.workspace, outputs(t, d.commands)["export-path"]))
	for _, token := range []string{e.token, e.pushWith} {
		e.noSecret(token, log, d)
		if strings.Contains(string(all), token) {
			t.Error("an object on the remote holds a token")
		}
		for name, body := range exported {
			if strings.Contains(body, token) {
				t.Errorf("the export's %s holds a token", name)
			}
		}
	}
}

// applyPrinted runs the apply command a comment prints, with the
// loop-action binary, in a fresh clone of the pull request's branch: the
// clone then holds the certified workspace as uncommitted changes.
func (e *e2eWorld) applyPrinted(comment string) {
	e.t.Helper()
	_, rest, _ := strings.Cut(comment, "```sh\n")
	line, _, _ := strings.Cut(rest, "\n")
	args := strings.Fields(line)
	if len(args) < 2 || args[0] != "loop-action" {
		e.t.Fatalf("no apply command in the comment:\n%s", comment)
	}
	bin := filepath.Join(e.t.TempDir(), "loop-action")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/loop-action").CombinedOutput(); err != nil {
		e.t.Fatalf("go build: %v\n%s", err, out)
	}
	clone := filepath.Join(e.t.TempDir(), "clone")
	e.gitCmd(e.dir, "clone", "-q", "--branch", "feature", "file://"+e.origin, clone)
	cmd := exec.Command(bin, args[1:]...)
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GITHUB_TOKEN="+e.token, "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+e.t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("%s: %v\n%s", line, err, out)
	}
	snap, err := workspace.NewHasher(clone).Snapshot(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	if cp := e.checkpoint(); string(snap) != cp.Snapshot {
		e.t.Errorf("after %s the clone is snapshot %s, not the certified %s\n%s", line, snap, cp.Snapshot, out)
	}
	if got := e.gitCmd(clone, "status", "--porcelain"); got != "M calc.sh" {
		e.t.Errorf("git status after apply:\n%s", got)
	}
}

// TestE2EFailedPushIsRetriedByTheNextEvent: a push-token the remote
// refuses delivers nothing — the comment says the push failed, the token
// shows nowhere, no commit gets success — and the next event on the same
// head starts a new generation that delivers.
func TestE2EFailedPushIsRetriedByTheNextEvent(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	const revoked = "ghp_revoked-token-000000000"
	head := e.headSHA
	code, log, d := e.pr(DeliverAuto, map[string]string{"INPUT_PUSH-TOKEN": revoked})
	if code != exitFailed || e.refs()["refs/heads/feature"] != head {
		t.Fatalf("exit %d, feature at %s\n%s", code, e.refs()["refs/heads/feature"], log)
	}
	if s := e.sticky(); !strings.Contains(s, "The push to `feature` failed") || !strings.Contains(s, "the token was refused") {
		t.Errorf("the sticky comment does not say the push failed, and why:\n%s", s)
	}
	e.noSecret(revoked, log, d)
	if got := e.successes(); len(got) != 0 {
		t.Errorf("success set on %v", got)
	}
	code, log, _ = e.pr(DeliverAuto, nil)
	tip := e.refs()["refs/heads/feature"]
	if code != exitOK || tip == head || e.ran() != 2 {
		t.Fatalf("the next event: exit %d, feature at %s, the agent ran %d times\n%s", code, tip, e.ran(), log)
	}
	if diff := cmp.Diff([]string{tip}, e.successes()); diff != "" {
		t.Errorf("commits with success (-want +got):\n%s", diff)
	}
}

// TestE2EForgedDeliveryRecordFailsNoJob: after the loop delivered its fix,
// someone with push access breaks the pull request again with a commit of
// their own and rewrites the run's checkpoint on the state branch to say
// the run succeeded on that commit, its work delivered (the record of the
// real delivery, kept). On main that job skipped the run, set no status
// and passed. Now the record, which names another commit than the head,
// is ignored: the head is measured, the loop runs and delivers its fix
// again, and the job passes only with the success it set.
func TestE2EForgedDeliveryRecordFailsNoJob(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	if code, log, _ := e.pr(DeliverAuto, nil); code != exitOK {
		t.Fatalf("the delivering job: exit %d\n%s", code, log)
	}
	clone := filepath.Join(e.t.TempDir(), "mallory")
	e.gitCmd(e.dir, "clone", "-q", "--branch", "feature", "file://"+e.origin, clone)
	copyFile(t, "../../examples/quickstart/calc.sh", filepath.Join(clone, "calc.sh")) // the bug, back
	e.gitCmd(clone, "commit", "-q", "-am", "revert the fix")
	e.gitCmd(clone, "push", "-q", "origin", "feature")
	broken := e.gitCmd(clone, "rev-parse", "HEAD")
	e.setHead(broken)
	st := e.store()
	cp, err := st.Load(t.Context(), "demo/pr-7")
	if err != nil || cp.Delivery == nil || cp.Status != "success" {
		t.Fatalf("the run after its delivery: %+v, %v", cp, err)
	}
	cp.Commit = broken // "succeeded on the head, and delivered"
	if err := st.Save(t.Context(), cp, state.Commit{KeepWorkspace: true}); err != nil {
		t.Fatal(err)
	}
	before := len(e.gh.AllStatuses(owner, repo))
	code, log, d := e.pr(DeliverAuto, nil)
	out := outputs(t, d.commands)
	var successes []string
	for _, s := range e.gh.AllStatuses(owner, repo)[before:] {
		if s.State == "success" {
			successes = append(successes, s.SHA)
		}
	}
	if code == exitOK && len(successes) == 0 {
		t.Fatalf("the job passed and set no success: it certified nothing\n%s", log)
	}
	if code != exitOK || out["success"] != "true" || e.ran() != 2 || !strings.Contains(log, "the delivery that the state branch records for run demo/pr-7 is ignored") {
		t.Errorf("exit %d, outputs %v, the agent ran %d times; want the loop to run on the head and deliver\n%s", code, out, e.ran(), log)
	}
	if tip := e.refs()["refs/heads/feature"]; tip == broken || !slices.Contains(successes, tip) {
		t.Errorf("feature at %s (broken %s), successes %v", tip, broken, successes)
	}
}
