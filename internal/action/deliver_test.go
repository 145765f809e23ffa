package action

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

// TestDeliverOntoThePullRequest: a run that converges by changing calc.sh
// pushes one commit onto the pull request's branch — parent the head it
// started from, tree the certified snapshot, the bot's identity, the
// trailers — with a compare-and-swap on that head. The commit carries
// success; the head never does: pending while the loop runs and while the
// fix is pushed, then failure saying where the fix went.
func TestDeliverOntoThePullRequest(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	head := f.head
	res := f.pr(nil)
	if res.err != nil {
		t.Fatalf("job: %v\n%s", res.err, res.log)
	}
	cp := f.checkpoint("demo/pr-7")
	pushes := f.git.tried()
	if len(pushes) != 1 {
		t.Fatalf("pushes %+v, want one", pushes)
	}
	d := pushes[0].SHA
	if diff := cmp.Diff(memPush{Ref: "refs/heads/feature", Old: head, SHA: d, Token: "ghs_github-token-0123456789"}, pushes[0]); diff != "" {
		t.Errorf("the push (-want +got):\n%s", diff)
	}
	c := f.git.get(d)
	if c.Parent != head || c.Snapshot != cp.Snapshot || c.Files["calc.sh"] != fixedCalc || c.Author != (Identity{Name: "github-actions[bot]", Email: "41898282+github-actions[bot]@users.noreply.github.com"}) {
		t.Errorf("the delivered commit: parent %s, snapshot %s (certified %s), author %v, calc.sh %q", c.Parent, c.Snapshot, cp.Snapshot, c.Author, c.Files["calc.sh"])
	}
	wantMsg := "loop demo: certified at iteration 1\n\nLoop-Run: demo/pr-7\nLoop-Iteration: 1\nLoop-Snapshot: " + cp.Snapshot + "\n"
	if c.Message != wantMsg {
		t.Errorf("message %q, want %q", c.Message, wantMsg)
	}
	want := []string{
		head[:7] + " pending: the loop is running",
		head[:7] + " pending: delivering the fix to this branch",
		d[:7] + " success: certified: snapshot " + cp.Snapshot[:7] + " at iteration 1 of demo/pr-7",
		head[:7] + " failure: fixed in " + d[:7] + " pushed to this branch",
	}
	if diff := cmp.Diff(want, f.statuses()); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{"success": "true", "stop-reason": "success", "delivered-sha": d, "delivered-ref": "feature", "pull-request": ""} {
		if res.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, res.outputs[k], v)
		}
	}
	if got := cp.Delivery; got == nil || got.SHA != d || got.Outcome != outcomePushed || got.Base != head || got.Ref != "feature" {
		t.Errorf("the recorded delivery: %+v", got)
	}
	if s := f.sticky(); !strings.Contains(s, "**Fixed in "+d[:7]+", pushed to `feature`.**") {
		t.Errorf("the sticky comment does not say where the fix went:\n%s", s)
	}
	f.setHead(d)
	if _, res := f.comment("reader", "/loop status", nil); res.err != nil || !strings.Contains(f.sticky(), "This run's certified work was pushed to `feature` as "+d[:7]+".") {
		t.Errorf("/loop status: %v; the sticky comment:\n%s", res.err, f.sticky())
	}
}

// TestDeliveredCommitIsNotLoopedOn: the event for the commit the loop
// delivered measures it again at iteration 0, sets success on it, and
// dispatches no agent and pushes nothing — however often it comes — and
// the generation does not deliver again. The measurement is gate-only,
// and run-id names the run that delivered the commit.
func TestDeliveredCommitIsNotLoopedOn(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	if res := f.pr(nil); res.err != nil {
		t.Fatal(res.err)
	}
	d := f.git.tried()[0].SHA
	f.setHead(d)
	before := len(f.gh.AllStatuses(owner, repo))
	for range 2 {
		res := f.pr(nil)
		if res.err != nil {
			t.Fatalf("the event on the delivered commit: %v\n%s", res.err, res.log)
		}
		if res.outputs["success"] != "true" || res.outputs["iterations"] != "0" || res.outputs["delivered-sha"] != "" ||
			res.outputs["stop-reason"] != "gate-only" || res.outputs["run-id"] != "demo/pr-7" {
			t.Errorf("outputs %v", res.outputs)
		}
	}
	if n := f.ran(); n != 1 {
		t.Errorf("the agent ran %d times, want once (before the delivery)", n)
	}
	if n := len(f.git.tried()); n != 1 {
		t.Errorf("%d pushes, want the one delivery", n)
	}
	want := []string{d[:7] + " success: certified again at iteration 0: snapshot " + f.checkpoint("demo/pr-7").Snapshot[:7]}
	if diff := cmp.Diff(append(want, want...), f.statuses()[before:]); diff != "" {
		t.Errorf("statuses on the delivered commit (-want +got):\n%s", diff)
	}
}

// judgedLoop is deliverLoop with a judge on the tests goal: judges only
// rule in a run, so a measurement at iteration 0 cannot satisfy it.
const judgedLoop = deliverLoop + `  [[goal.check]]
  type = "judge"
  node = "review"
[providers.judge]
command = ["sh", "agents/judge.sh"]
[[node]]
name = "review"
role = "judge"
provider = "judge"
after = ["fixer"]
`

// judgedFlow is a flow of judgedLoop, whose judge always passes.
func judgedFlow(t *testing.T) *flow {
	t.Helper()
	judge := "cat >/dev/null\necho '{\"verdict\":\"pass\",\"reason\":\"adds\",\"evidence\":\"calc.sh adds\"}'\n"
	f := newFlow(t, judgedLoop, fixer(""))
	for _, sha := range []*string{&f.base, &f.head} {
		files := f.git.get(*sha).Files
		files["agents/judge.sh"] = judge
		parent := ""
		if sha == &f.head {
			parent = f.base
		}
		*sha = f.git.commit(parent, files, "with a judge")
	}
	f.git.refs["refs/heads/main"] = f.base
	f.gh.AddFile(owner, repo, f.base, ".github/loop.toml", []byte(judgedLoop))
	f.setHead(f.head)
	return f
}

// TestDeliveredCommitIsNotLoopedOnWithJudges: on the commit it delivered,
// a loop with a judge check dispatches neither builder nor judge: the
// measurement at iteration 0 cannot pass the judge, so the status the
// delivering job set stays, and the job does not fail.
func TestDeliveredCommitIsNotLoopedOnWithJudges(t *testing.T) {
	t.Parallel()
	f := judgedFlow(t)
	if res := f.pr(nil); res.err != nil || len(f.git.tried()) != 1 {
		t.Fatalf("the delivering job: %v, pushes %+v\n%s", res.err, f.git.tried(), res.log)
	}
	d := f.git.tried()[0].SHA
	f.setHead(d)
	before := f.statuses()
	res := f.pr(nil)
	if res.err != nil || res.outputs["success"] != "false" || res.outputs["stop-reason"] != "gate-only" {
		t.Fatalf("the event on the delivered commit: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	if f.ran() != 1 || len(f.git.tried()) != 1 {
		t.Errorf("the builder ran %d times and %d pushes were tried: the loop ran on its own commit", f.ran(), len(f.git.tried()))
	}
	if diff := cmp.Diff(before, f.statuses()); diff != "" {
		t.Errorf("statuses changed (-before +after):\n%s", diff)
	}
	if !strings.Contains(f.sticky(), "Only judge checks fail") {
		t.Errorf("the sticky comment:\n%s", f.sticky())
	}
}

// TestHeadAlreadyCertified: a head whose tree already passes is certified
// at iteration 0: success on it, no agent, no push.
func TestHeadAlreadyCertified(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	files := f.git.get(f.head).Files
	files["calc.sh"] = fixedCalc
	f.setHead(f.git.commit(f.head, files, "fix by hand"))
	res := f.pr(nil)
	if res.err != nil || res.outputs["success"] != "true" || res.outputs["iterations"] != "0" {
		t.Fatalf("job: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	if f.ran() != 0 || len(f.git.tried()) != 0 {
		t.Errorf("the agent ran %d times and %d pushes were tried", f.ran(), len(f.git.tried()))
	}
	if got := f.statuses(); got[len(got)-1] != f.head[:7]+" success: certified: snapshot "+f.checkpoint("demo/pr-7").Snapshot[:7]+" at iteration 0 of demo/pr-7" {
		t.Errorf("statuses %q", got)
	}
}

// TestHeadMovesMidDelivery: someone pushes to the branch while the loop
// runs; the compare-and-swap fails, nothing is pushed or overwritten, no
// commit gets success, the comment says so, and the next event (on the
// new head) starts a new generation.
func TestHeadMovesMidDelivery(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	files := f.git.get(f.head).Files
	files["NOTES.md"] = "a human's commit\n"
	theirs := f.git.commit(f.head, files, "theirs")
	f.git.moves["refs/heads/feature"] = theirs
	head := f.head
	res := f.pr(nil)
	if !errors.Is(res.err, ErrUnsuccessful) {
		t.Fatalf("job: %v, want it to fail\n%s", res.err, res.log)
	}
	if got := f.git.refs["refs/heads/feature"]; got != theirs {
		t.Errorf("feature is at %s, want their commit %s: it was overwritten", got, theirs)
	}
	for _, s := range f.statuses() {
		if strings.Contains(s, "success") {
			t.Errorf("a status says success: %s", s)
		}
	}
	if got := f.statuses(); got[len(got)-1] != head[:7]+" failure: the branch moved; nothing pushed" {
		t.Errorf("last status %q", got[len(got)-1])
	}
	if res.outputs["success"] != "false" || res.outputs["delivered-sha"] != "" {
		t.Errorf("outputs %v", res.outputs)
	}
	if s := f.sticky(); !strings.Contains(s, "The branch moved; nothing pushed.") {
		t.Errorf("the sticky comment:\n%s", s)
	}
	if cp := f.checkpoint("demo/pr-7"); cp.Delivery == nil || cp.Delivery.Outcome != outcomeMoved {
		t.Errorf("recorded delivery %+v, want moved", cp.Delivery)
	}
	f.setHead(theirs)
	if res := f.pr(nil); res.err != nil || res.outputs["success"] != "true" {
		t.Fatalf("the next event: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	if f.ran() != 2 || f.git.refs["refs/heads/feature"] == theirs {
		t.Errorf("the new generation: the agent ran %d times in all, feature at %s", f.ran(), f.git.refs["refs/heads/feature"])
	}
}

// TestForgedSuccessIsMeasuredAgain: a checkpoint on the state branch that
// says success (anyone with push access can write one) certifies nothing:
// the job measures the head again, and sets no success on a head that
// fails.
func TestForgedSuccessIsMeasuredAgain(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, "cat >/dev/null\necho ran >>\"$AGENT_LOG\"\n") // an agent that fixes nothing
	store, err := f.store(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	forged := &state.Checkpoint{Version: state.Version, RunID: "demo/pr-7", Loop: "demo", Commit: f.head, Status: state.Success,
		Iteration: 1, MaxIterations: 2, Snapshot: f.git.get(f.head).Snapshot}
	if err := store.Save(t.Context(), forged, state.Commit{KeepWorkspace: true}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	res := f.pr(nil)
	if !errors.Is(res.err, ErrUnsuccessful) || res.outputs["success"] != "false" || res.outputs["stop-reason"] == "success" {
		t.Fatalf("job: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	for _, s := range f.statuses() {
		if strings.Contains(s, "success") {
			t.Errorf("a status says success: %s", s)
		}
	}
	if f.ran() == 0 {
		t.Error("the run was not measured and driven again")
	}
}

// TestCheckoutMustBeTheHead: a job whose checkout is not the head's tree
// (GitHub's merge commit, actions/checkout's default) fails with exit 2
// and the fix, before anything runs.
func TestCheckoutMustBeTheHead(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	files := f.git.get(f.base).Files
	files["MERGED.md"] = "main moved on\n"
	merge := f.git.commit(f.base, files, "merge")
	res := f.job("pull_request", prEvent(f.head), merge, nil)
	var usage *UsageError
	want := "the checkout is commit " + merge[:7] + ", not the pull request's head " + f.head[:7] + " (2 paths differ: added MERGED.md, deleted README.md); check out the head"
	if !errors.As(res.err, &usage) || !strings.Contains(res.err.Error(), want) || !strings.Contains(res.err.Error(), "ref: ${{ github.event.pull_request.head.sha }}") {
		t.Fatalf("job: %v, want a usage error naming the commit and the paths, with the fix", res.err)
	}
	if f.ran() != 0 || len(f.gh.AllStatuses(owner, repo)) != 0 || f.checkpoint("demo/pr-7") != nil {
		t.Errorf("something ran: agent %d, statuses %q", f.ran(), f.statuses())
	}
}

// TestLoopBranchIsNotLoopedOn: the pull request a scheduled run opened
// from loop/demo gets its own pull_request events (with a push-token);
// the loop measures its head and never runs agents on its own branch —
// not even when a judge check, which only rules in a run, keeps the gate
// from holding at iteration 0.
func TestLoopBranchIsNotLoopedOn(t *testing.T) {
	t.Parallel()
	f := judgedFlow(t)
	if res := f.schedule(nil); res.err != nil || res.outputs["pull-request"] != "8" {
		t.Fatalf("the scheduled run: %v, outputs %v", res.err, res.outputs)
	}
	d := f.git.refs["refs/heads/loop/demo"]
	ev := prEvent(d)
	ev["number"], ev["pull_request"].(map[string]any)["number"] = float64(8), float64(8)
	ev["pull_request"].(map[string]any)["head"].(map[string]any)["ref"] = "loop/demo"
	ev["pull_request"].(map[string]any)["base"].(map[string]any)["sha"] = f.base
	res := f.job("pull_request", ev, d, nil)
	if res.err != nil || res.outputs["stop-reason"] != "gate-only" || !strings.Contains(stickyOn(f.gh, 8), "a branch this loop delivers to") {
		t.Fatalf("the loop's pull request: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	if f.ran() != 1 || len(f.git.tried()) != 1 {
		t.Errorf("the agent ran %d times, %d pushes: the loop ran on its own branch", f.ran(), len(f.git.tried()))
	}
}

// TestFailedPushIsRetried: a push that failed (a token without the
// permission, say) delivered nothing; the next event on the same head
// measures and delivers again, as a new generation.
func TestFailedPushIsRetried(t *testing.T) {
	t.Parallel()
	f := newFlow(t, deliverLoop, fixer(""))
	f.git.failing["Push"] = errors.New("403: Resource not accessible by integration")
	if res := f.pr(nil); !errors.Is(res.err, ErrUnsuccessful) {
		t.Fatalf("the failed push: %v", res.err)
	}
	delete(f.git.failing, "Push")
	res := f.pr(nil)
	if res.err != nil || res.outputs["delivered-sha"] == "" || f.git.refs["refs/heads/feature"] != res.outputs["delivered-sha"] {
		t.Fatalf("the retry: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
}
