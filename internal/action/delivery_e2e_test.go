package action

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Delivery end to end: the action in process with DeliveryGit (package
// delivery), against the GitHub fake and the bare repository served over
// smart HTTP (token-checked), with a scripted agent that counts its calls.

// e2eWorld is a world whose agent is fixer(extra) and logs its calls.
type e2eWorld struct {
	*world
	agentLog string
}

func newE2E(t *testing.T, config, extra string) *e2eWorld {
	t.Helper()
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	e := &e2eWorld{world: newWorldAgent(t, config, fixer(extra)), agentLog: filepath.Join(t.TempDir(), "agent.log")}
	e.tick()
	return e
}

// job runs the action on event (a testdata/events file) for the checkout
// of ref, with deliver mode and more inputs.
func (e *e2eWorld) job(event, file, ref, mode string, more map[string]string) (int, string, jobDirs) {
	e.t.Helper()
	in := map[string]string{"INPUT_DELIVER": mode, "AGENT_LOG": e.agentLog}
	for k, v := range more {
		in[k] = v
	}
	d := e.jobDirs(ref)
	code, log := inProcess(e.t, e.world, d, event, e.event(d.workflow, file, nil), in)
	return code, log, d
}

// pr runs a pull_request job on the pull request's head.
func (e *e2eWorld) pr(mode string, more map[string]string) (int, string, jobDirs) {
	e.t.Helper()
	return e.job("pull_request", "pull_request_opened", "feature", mode, more)
}

// ran is how many times the agent ran.
func (e *e2eWorld) ran() int {
	b, _ := os.ReadFile(e.agentLog)
	return strings.Count(string(b), "ran\n")
}

// refs are the remote's branches but the state branch: ref → sha.
func (e *e2eWorld) refs() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(e.gitCmd(e.origin, "for-each-ref", "--format=%(refname) %(objectname)", "refs/"), "\n") {
		if ref, sha, ok := strings.Cut(line, " "); ok && ref != "refs/heads/loop-state" {
			out[ref] = sha
		}
	}
	return out
}

// setHead makes sha the pull request's head, as a push to feature does.
func (e *e2eWorld) setHead(sha string) {
	e.headSHA = sha
	e.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, HeadSHA: sha, HeadRef: "feature", BaseRef: "main", BaseSHA: e.baseSHA, Author: "writer"})
}

// successes are the commits that ever got loop/demo success.
func (e *e2eWorld) successes() []string {
	var out []string
	for _, s := range e.gh.AllStatuses(owner, repo) {
		if s.State == "success" {
			out = append(out, s.SHA)
		}
	}
	return out
}

// sticky is the bot's sticky comment on #7.
func (e *e2eWorld) sticky() string {
	for _, c := range e.gh.Comments(owner, repo, 7) {
		if c.User == bot && strings.HasPrefix(c.Body, Marker("demo")+"\n") {
			return c.Body
		}
	}
	return ""
}

// checkoutSnapshot is the workspace snapshot of a fresh clone of ref.
func (e *e2eWorld) checkoutSnapshot(ref string) string {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), "clone")
	e.gitCmd(e.dir, "clone", "-q", "--branch", ref, "file://"+e.origin, dir)
	snap, err := workspace.NewHasher(dir).Snapshot(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return string(snap)
}

// TestE2EDeliverOntoThePullRequest: a same-repository pull request with
// deliver: auto gets exactly one new commit on its branch — parent the
// old head, a checkout of it the certified snapshot, the bot's identity,
// the trailers — which alone carries success; the old head gets failure
// saying where the fix went. An event on the delivered commit then
// measures it at iteration 0: no agent, no push, success on it.
func TestE2EDeliverOntoThePullRequest(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	head := e.headSHA
	code, log, d := e.pr(DeliverAuto, nil)
	out := outputs(t, d.commands)
	if code != exitOK || out["success"] != "true" {
		t.Fatalf("exit %d, outputs %v\n%s", code, out, log)
	}
	tip := e.refs()["refs/heads/feature"]
	if got := e.gitCmd(e.origin, "rev-list", head+".."+tip); got != tip {
		t.Fatalf("new commits on feature: %q, want exactly %s", got, tip)
	}
	cp := e.checkpoint()
	if got := e.gitCmd(e.origin, "rev-parse", tip+"^"); got != head {
		t.Errorf("parent %s, want the old head %s", got, head)
	}
	if got := e.checkoutSnapshot("feature"); got != cp.Snapshot {
		t.Errorf("a checkout of the delivered commit is snapshot %s, the gate certified %s", got, cp.Snapshot)
	}
	ident := "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
	if got := e.gitCmd(e.origin, "log", "-1", "--format=%an <%ae>|%cn <%ce>", tip); got != ident+"|"+ident {
		t.Errorf("author|committer %q", got)
	}
	msg := e.gitCmd(e.origin, "log", "-1", "--format=%B", tip)
	if want := "Loop-Run: demo/pr-7\nLoop-Iteration: 1\nLoop-Snapshot: " + cp.Snapshot; !strings.HasSuffix(msg, want) {
		t.Errorf("message %q lacks the trailers %q", msg, want)
	}
	if diff := cmp.Diff([]string{tip}, e.successes()); diff != "" {
		t.Errorf("commits with success (-want +got):\n%s", diff)
	}
	st := e.gh.Statuses(owner, repo, head)
	if last := st[len(st)-1]; last.State != "failure" || !strings.Contains(last.Description, "fixed in "+tip[:7]) {
		t.Errorf("the old head's last status %+v", last)
	}
	for k, v := range map[string]string{"delivered-sha": tip, "delivered-ref": "feature", "stop-reason": "success"} {
		if out[k] != v {
			t.Errorf("output %s = %q, want %q", k, out[k], v)
		}
	}

	// The event on the delivered commit: iteration 0, no agent, no push.
	e.setHead(tip)
	refs, pushes := e.refs(), pushedBeside(e.git)
	code, log, d = e.pr(DeliverAuto, nil)
	out = outputs(t, d.commands)
	if code != exitOK || out["success"] != "true" || out["iterations"] != "0" || out["delivered-sha"] != "" {
		t.Fatalf("the rerun: exit %d, outputs %v\n%s", code, out, log)
	}
	if e.ran() != 1 {
		t.Errorf("the agent ran %d times, want once (before the delivery)", e.ran())
	}
	if diff := cmp.Diff(refs, e.refs()); diff != "" {
		t.Errorf("the rerun moved the remote's branches (-before +after):\n%s", diff)
	}
	if pushedBeside(e.git) != pushes {
		t.Errorf("the rerun pushed %d times", pushedBeside(e.git)-pushes)
	}
	if diff := cmp.Diff([]string{tip, tip}, e.successes()); diff != "" {
		t.Errorf("commits with success (-want +got):\n%s", diff)
	}
}

// TestE2EHeadMovesBeforeThePush: someone pushes to the branch after the
// loop built its commit and before its push arrives. The compare-and-swap
// fails at the remote: their commit stays, nothing is overwritten, no
// commit gets success, and the comment says why.
func TestE2EHeadMovesBeforeThePush(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	head := e.headSHA
	seed := filepath.Join(e.dir, "seed")
	writeFile(t, filepath.Join(seed, "NOTES.md"), "a human's commit\n")
	e.gitCmd(seed, "add", "-A")
	e.gitCmd(seed, "commit", "-q", "-m", "theirs")
	theirs := e.gitCmd(seed, "rev-parse", "HEAD")
	var moved atomic.Bool
	e.git.OnPush(func(p gitfake.Push) {
		if slices.Contains(p.Refs, "refs/heads/feature") && moved.CompareAndSwap(false, true) {
			if out, err := exec.Command("git", "-C", seed, "push", "-q", e.origin, "feature").CombinedOutput(); err != nil {
				t.Errorf("their push: %v\n%s", err, out)
			}
		}
	})
	code, log, d := e.pr(DeliverAuto, nil)
	if code != exitFailed || !moved.Load() {
		t.Fatalf("exit %d (moved: %t), want the job to fail\n%s", code, moved.Load(), log)
	}
	if got := e.refs()["refs/heads/feature"]; got != theirs {
		t.Errorf("feature is at %s, want their commit %s", got, theirs)
	}
	if got := e.successes(); len(got) != 0 {
		t.Errorf("success set on %v", got)
	}
	if s := e.sticky(); !strings.Contains(s, "**The branch moved; nothing pushed.**") || !strings.Contains(s, head[:7]) {
		t.Errorf("the sticky comment does not say the branch moved:\n%s", s)
	}
	if out := outputs(t, d.commands); out["delivered-sha"] != "" || out["success"] != "false" {
		t.Errorf("outputs %v", out)
	}
	if cp := e.checkpoint(); cp.Delivery == nil || cp.Delivery.Outcome != outcomeMoved {
		t.Errorf("recorded delivery %+v, want moved", cp.Delivery)
	}
}

// TestE2EScheduledRunOpensOnePullRequest: a scheduled run pushes its
// certified work to loop/demo and opens one pull request into main; after
// main moves, the next scheduled run pushes its new work to the same
// branch (compare-and-swap on its tip) and updates that pull request,
// never opening a second. main itself is never pushed to.
func TestE2EScheduledRunOpensOnePullRequest(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	code, log, _ := e.job("schedule", "schedule", "main", DeliverAuto, map[string]string{"GITHUB_SHA": e.baseSHA})
	if code != exitOK {
		t.Fatalf("the first scheduled run exited %d\n%s", code, log)
	}
	first := e.refs()["refs/heads/loop/demo"]
	if first == "" || e.gitCmd(e.origin, "rev-parse", first+"^") != e.baseSHA || e.refs()["refs/heads/main"] != e.baseSHA {
		t.Fatalf("after the first run: refs %v\n%s", e.refs(), log)
	}
	e.checkLoopPulls(1)

	seed := filepath.Join(e.dir, "seed")
	e.gitCmd(seed, "checkout", "-q", "main")
	writeFile(t, filepath.Join(seed, "CHANGELOG.md"), "main moved\n")
	e.gitCmd(seed, "add", "-A")
	e.gitCmd(seed, "commit", "-q", "-m", "main moves")
	main := e.gitCmd(seed, "rev-parse", "HEAD")
	e.gitCmd(seed, "push", "-q", e.origin, "main")
	code, log, d := e.job("schedule", "schedule", "main", DeliverAuto, map[string]string{"GITHUB_SHA": main})
	if code != exitOK {
		t.Fatalf("the second scheduled run exited %d\n%s", code, log)
	}
	second := e.refs()["refs/heads/loop/demo"]
	if second == first || e.gitCmd(e.origin, "rev-parse", second+"^") != main {
		t.Errorf("loop/demo is at %s (was %s), want a commit on the new main %s", second, first, main)
	}
	if e.refs()["refs/heads/main"] != main {
		t.Errorf("main moved to %s", e.refs()["refs/heads/main"])
	}
	snap := e.storeSnapshot("demo/main")
	if got := e.checkoutSnapshot("loop/demo"); got != snap {
		t.Errorf("a checkout of loop/demo is snapshot %s, not the certified %s", got, snap)
	}
	pull := e.checkLoopPulls(2)
	if out := outputs(t, d.commands); out["delivered-sha"] != second || out["delivered-ref"] != "loop/demo" || out["pull-request"] != strconv.Itoa(pull.Number) {
		t.Errorf("outputs %v, want the pull request #%d", out, pull.Number)
	}
	if !strings.Contains(pull.Body, snap[:7]) {
		t.Errorf("the pull request's body was not updated with the second run's snapshot %s:\n%s", snap[:7], pull.Body)
	}
}

// checkLoopPulls checks that exactly one pull request goes from loop/demo
// into main, opened by the bot, with the report as its body, and returns it.
func (e *e2eWorld) checkLoopPulls(runs int) githubfake.Pull {
	e.t.Helper()
	var got []githubfake.Pull
	for _, p := range e.gh.Pulls(owner, repo) {
		if p.HeadRef == "loop/demo" {
			got = append(got, p)
		}
	}
	if len(got) != 1 || got[0].BaseRef != "main" || got[0].Creator != bot {
		e.t.Fatalf("pull requests from loop/demo after %d runs: %+v", runs, got)
	}
	if !strings.Contains(got[0].Body, "demo/main") {
		e.t.Errorf("the pull request's body is not the run's report:\n%s", got[0].Body)
	}
	return got[0]
}

// storeSnapshot is the snapshot of run id's checkpoint on the state branch.
func (e *e2eWorld) storeSnapshot(id string) string {
	e.t.Helper()
	cp, err := e.store().Load(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return cp.Snapshot
}

// TestDeliveryScenarioInProcess is the delivery scenario of the container
// test, with the action called in this process.
func TestDeliveryScenarioInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	deliveryScenario(t, newWorldAgent(t, deliverLoop, fixer("")), inProcess)
}

// deliveryScenario: a same-repository pull request with deliver: auto;
// the loop fixes calc.sh and pushes one commit onto feature over smart
// HTTP, whose parent is the head and whose checkout is the certified
// snapshot; that commit alone gets success, the head failure.
func deliveryScenario(t *testing.T, w *world, run invoker) {
	head := w.headSHA
	d := w.jobDirs("feature")
	code, log := run(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil),
		map[string]string{"INPUT_DELIVER": DeliverAuto, "AGENT_LOG": "/dev/null"})
	out := outputs(t, d.commands)
	if code != exitOK || out["success"] != "true" {
		t.Fatalf("exit %d, outputs %v\n%s", code, out, log)
	}
	e := &e2eWorld{world: w}
	tip := e.refs()["refs/heads/feature"]
	if tip != out["delivered-sha"] || e.gitCmd(w.origin, "rev-list", head+".."+tip) != tip || e.gitCmd(w.origin, "rev-parse", tip+"^") != head {
		t.Fatalf("feature is at %s (delivered-sha %q), want one commit on %s", tip, out["delivered-sha"], head)
	}
	if got, want := e.checkoutSnapshot("feature"), w.checkpoint().Snapshot; got != want {
		t.Errorf("a checkout of the delivered commit is snapshot %s, the gate certified %s", got, want)
	}
	if diff := cmp.Diff([]string{tip}, e.successes()); diff != "" {
		t.Errorf("commits with success (-want +got):\n%s", diff)
	}
	if st := w.gh.Statuses(owner, repo, head); len(st) == 0 || st[len(st)-1].State != "failure" {
		t.Errorf("the head's statuses %+v, want failure last", st)
	}
	if unmasked(log, w.token) {
		t.Error("the job log carries the token outside its add-mask command")
	}
}

// TestE2EDeliverWhenTheHeadTracksIgnoredFiles: the head tracks a file its
// .gitignore ignores, so a commit's raw tree and its checkout's snapshot
// differ. The delivered commit is compared by its checkout's snapshot
// (Built.Snapshot): it is delivered, keeps the tracked file, and gets
// success.
func TestE2EDeliverWhenTheHeadTracksIgnoredFiles(t *testing.T) {
	e := newE2E(t, deliverLoop, "")
	seed := filepath.Join(e.dir, "seed")
	writeFile(t, filepath.Join(seed, ".gitignore"), ".loop/\nout/\n")
	writeFile(t, filepath.Join(seed, "out/generated.txt"), "tracked, though ignored\n")
	e.gitCmd(seed, "add", "-f", ".gitignore", "out/generated.txt")
	e.gitCmd(seed, "commit", "-q", "-m", "track a generated file")
	e.gitCmd(seed, "push", "-q", e.origin, "feature")
	head := e.gitCmd(seed, "rev-parse", "HEAD")
	e.setHead(head)
	code, log, d := e.pr(DeliverAuto, nil)
	out := outputs(t, d.commands)
	if code != exitOK || out["delivered-sha"] == "" {
		t.Fatalf("exit %d, outputs %v\n%s", code, out, log)
	}
	tip := out["delivered-sha"]
	if got := e.gitCmd(e.origin, "show", tip+":out/generated.txt"); got != "tracked, though ignored" {
		t.Errorf("the delivered commit's out/generated.txt: %q", got)
	}
	if e.gitCmd(e.origin, "rev-parse", tip+"^{tree}") == e.checkoutSnapshot("feature") {
		t.Error("the raw tree equals the checkout's snapshot: the test does not tell them apart")
	}
	if diff := cmp.Diff([]string{tip}, e.successes()); diff != "" {
		t.Errorf("commits with success (-want +got):\n%s", diff)
	}
}
