package action

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// forgeDelivery writes onto the run's state, as anyone with push access
// to the state branch can, a checkpoint of the head (status st) that
// records d as the delivery of its certified work, with the head's files
// as the run's workspace.
func (f *flow) forgeDelivery(st state.Status, d state.Delivery) {
	f.t.Helper()
	store, err := f.store(f.git.checkout(f.head))
	if err != nil {
		f.t.Fatal(err)
	}
	defer store.Close()
	snap := f.git.get(f.head).Snapshot
	d.Kind, d.At = kindCertified, time.Now().UTC()
	cp := &state.Checkpoint{Version: state.Version, RunID: "demo/pr-7", Loop: "demo", Commit: f.head, Status: st,
		Iteration: 1, MaxIterations: 2, Snapshot: snap, Delivery: &d}
	if err := store.Save(f.t.Context(), cp, state.Commit{}); err != nil {
		f.t.Fatal(err)
	}
}

// TestForgedDeliveryNeverPassesAJob: a "delivered" record on the state
// branch that no job of the loop made, in every shape a forger can write
// — naming the head as the delivered commit (with its snapshot, so the
// tree checks out), naming another commit, along with a success status
// its writer set on the head with a token of their own — never makes a
// job end as if it had certified something. On main each of these jobs
// skipped the run (and the judge) and passed with no status at all; now
// the record is ignored, the head is measured and the loop runs on it as
// on any head, loop/demo is set from that, and the job passes only with a
// success this job set.
func TestForgedDeliveryNeverPassesAJob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		judged bool   // the loop has a judge, which only rules in a run
		fixed  bool   // the head passes the test goal already
		other  bool   // the record names another commit than the head
		status string // a success the forger set on the head, as themselves
		st     state.Status
	}{
		{name: "the head as delivered, a loop with a judge, a head that passes the tests", judged: true, fixed: true, st: state.Success},
		{name: "the head as delivered, a loop with a judge", judged: true, st: state.Success},
		{name: "the head as delivered, with the forger's own success on it", judged: true, fixed: true, st: state.Success,
			status: "certified: snapshot 0000000 at iteration 1 of demo/pr-7"},
		{name: "another commit as delivered", other: true, st: state.Success},
		{name: "another commit as delivered, a loop with a judge", judged: true, other: true, st: state.Success},
		{name: "another commit as delivered from a run that did not succeed", other: true, st: state.NoProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFlow(t, deliverLoop, fixer(""))
			if tt.judged {
				f = judgedFlow(t)
			}
			if tt.fixed {
				files := f.git.get(f.head).Files
				files["calc.sh"] = fixedCalc
				f.setHead(f.git.commit(f.head, files, "fix by hand"))
			}
			d := state.Delivery{Mode: DeliverPush, Outcome: outcomePushed, Ref: "feature", SHA: f.head, Base: f.base, Snapshot: f.git.get(f.head).Snapshot}
			if tt.other {
				files := f.git.get(f.head).Files
				files["calc.sh"] = fixedCalc
				files["FORGED"] = "x\n"
				d.SHA, d.Base, d.Snapshot = f.git.commit(f.head, files, "forged"), f.head, f.git.get(f.head).Snapshot
			}
			if tt.status != "" {
				f.gh.AddStatus(owner, repo, githubfake.Status{Creator: "mallory", SHA: f.head, State: "success", Context: "loop/demo", Description: tt.status})
			}
			f.forgeDelivery(tt.st, d)
			before := len(f.gh.AllStatuses(owner, repo))
			res := f.pr(nil)
			set := f.gh.AllStatuses(owner, repo)[before:]
			var successes []string
			for _, s := range set {
				if s.State == "success" {
					successes = append(successes, s.SHA)
				}
			}
			switch {
			case res.err == nil && len(successes) == 0:
				t.Fatalf("the job passed and set no success (statuses %+v): it certified nothing\n%s", set, res.log)
			case res.err != nil && !errors.Is(res.err, ErrUnsuccessful):
				t.Fatalf("job: %v\n%s", res.err, res.log)
			case res.err == nil && res.outputs["success"] != "true":
				t.Errorf("the job passed with outputs %v", res.outputs)
			}
			if tt.st != state.Success { // a run recorded as over is reported as it stands, and fails the job
				return
			}
			if len(set) == 0 {
				t.Errorf("no status was set: loop/demo must say what the head measured\n%s", res.log)
			}
			if f.ran() == 0 {
				t.Errorf("no agent ran: the recorded delivery was taken for the loop's own commit\n%s", res.log)
			}
			if tt.other && strings.Contains(res.log, "nothing new to measure") {
				t.Errorf("the job took the record's word:\n%s", res.log)
			}
		})
	}
}

// TestLoopBranchNameCertifiesNothing: a pull request from a branch named
// as the loop's own (loop/demo-…) is measured and never looped on; when
// only a judge keeps its gate from holding, the job passes only if GitHub
// shows a success this loop set on the head. A human's commit there has
// none: on main the job passed with no status at all; now the head gets
// failure, and the job fails.
func TestLoopBranchNameCertifiesNothing(t *testing.T) {
	t.Parallel()
	f := judgedFlow(t)
	files := f.git.get(f.head).Files
	files["calc.sh"] = fixedCalc
	f.setHead(f.git.commit(f.head, files, "fix by hand"))
	ev := prEvent(f.head)
	ev["pull_request"].(map[string]any)["head"].(map[string]any)["ref"] = "loop/demo-mine"
	res := f.job("pull_request", ev, f.head, nil)
	if !errors.Is(res.err, ErrUnsuccessful) || res.outputs["success"] != "false" {
		t.Fatalf("job: %v, outputs %v\n%s", res.err, res.outputs, res.log)
	}
	if got := f.statuses(); len(got) != 1 || got[0] != f.head[:7]+" failure: only judge checks fail, and no certified success of this loop is on this commit" {
		t.Errorf("statuses %q", got)
	}
	if f.ran() != 0 {
		t.Errorf("the agent ran %d times on the loop's branch", f.ran())
	}
}

// TestCertifiedOnGitHub: what GitHub must show on a commit for the
// state branch's word about it to stand: the newest loop/demo status,
// success, set by the bot, naming the snapshot.
func TestCertifiedOnGitHub(t *testing.T) {
	t.Parallel()
	const snap = "5a5a000000000000000000000000000000000003"
	tests := []struct {
		name     string
		statuses [][3]string // creator, state, description, oldest first
		why      string      // part of why not; "" when it stands
	}{
		{name: "the delivering job's success", statuses: [][3]string{{bot, "success", "certified: snapshot 5a5a000 at iteration 2 of demo/pr-7"}}},
		{name: "measured again since", statuses: [][3]string{{bot, "success", "certified: snapshot 5a5a000 at iteration 2 of demo/pr-7"},
			{bot, "success", "certified again at iteration 0: snapshot 5a5a000"}}},
		{name: "none", why: "cafe000 has no loop/demo status"},
		{name: "pending", statuses: [][3]string{{bot, "pending", "the loop is running"}}, why: "loop/demo on cafe000 is pending, not success"},
		{name: "a failure after the success", statuses: [][3]string{{bot, "success", "certified: snapshot 5a5a000"}, {bot, "failure", "x"}},
			why: "is failure, not success"},
		{name: "someone else's success", statuses: [][3]string{{"mallory", "success", "certified: snapshot 5a5a000"}},
			why: "the loop/demo success on cafe000 was set by mallory, not by github-actions[bot]"},
		{name: "another snapshot's", statuses: [][3]string{{bot, "success", "certified: snapshot 0dd0000 at iteration 2 of demo/pr-7"}},
			why: "does not name snapshot 5a5a000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			for _, s := range tt.statuses {
				m.gh.AddStatus(owner, repo, githubfake.Status{Creator: s[0], SHA: memHead, State: s[1], Context: "loop/demo", Description: s[2]})
			}
			m.gh.AddStatus(owner, repo, githubfake.Status{Creator: bot, SHA: memHead, State: "failure", Context: "loop/other", Description: "another loop's"})
			why, err := m.j.pub().certifiedOnGitHub(t.Context(), m.s, memHead, snap)
			if err != nil || (why == "") != (tt.why == "") || !strings.Contains(why, tt.why) {
				t.Errorf("why %q, error %v; want %q", why, err, tt.why)
			}
		})
	}
	t.Run("the API fails", func(t *testing.T) {
		t.Parallel()
		m := newMemJob(t, demoLoop)
		m.gh.FailEvery("GET", "/repos/*/*/commits/*/statuses", http.StatusBadGateway)
		if why, err := m.j.pub().certifiedOnGitHub(t.Context(), m.s, memHead, snap); err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") || why != "" {
			t.Errorf("why %q, error %v; want the error", why, err)
		}
	})
}

// rewriteCheckpoint changes run runID's checkpoint as anyone with push
// access to the state branch can.
func (f *flow) rewriteCheckpoint(runID string, change func(*state.Checkpoint)) {
	f.t.Helper()
	cp := f.checkpoint(runID)
	if cp == nil {
		f.t.Fatalf("run %s has no checkpoint", runID)
	}
	change(cp)
	store, err := f.store(f.git.checkout(f.head))
	if err != nil {
		f.t.Fatal(err)
	}
	defer store.Close()
	if err := store.Save(f.t.Context(), cp, state.Commit{}); err != nil {
		f.t.Fatal(err)
	}
}

// TestScheduleRestsOnlyOnAVerifiedDelivery: a branch's run delivers onto
// loop/demo and its pull request, beside a head that stays as it was; the
// next scheduled job on the same head rests — no agent, no push — when
// the record is verified against the remote and GitHub: loop/demo still
// points at the commit it names, which carries the loop's success. A
// record naming another commit of loop/demo (one the forger pushed there,
// with no success of the loop), or a branch that moved, is ignored: the
// head is measured and looped on again, as any head.
func TestScheduleRestsOnlyOnAVerifiedDelivery(t *testing.T) {
	t.Parallel()
	deliver := func(t *testing.T) *flow {
		f := newFlow(t, deliverLoop, fixer(""))
		if res := f.schedule(nil); res.err != nil || res.outputs["delivered-ref"] != "loop/demo" {
			t.Fatalf("first run: %v, outputs %v\n%s", res.err, res.outputs, res.log)
		}
		return f
	}
	t.Run("verified: the next night rests", func(t *testing.T) {
		t.Parallel()
		f := deliver(t)
		calls, pushes := f.ran(), len(f.git.tried())
		res := f.schedule(nil)
		if res.err != nil || f.ran() != calls || len(f.git.tried()) != pushes || !strings.Contains(res.summary, "nothing new to measure") {
			t.Fatalf("job: %v, agent calls %d → %d, pushes %d → %d\n%s", res.err, calls, f.ran(), pushes, len(f.git.tried()), res.log)
		}
	})
	forged := map[string]func(f *flow){
		"a commit the forger pushed to loop/demo": func(f *flow) {
			files := f.git.get(f.git.refs["refs/heads/loop/demo"]).Files
			files["FORGED"] = "x\n"
			sha := f.git.commit(f.head, files, "forged")
			f.git.refs["refs/heads/loop/demo"] = sha
			f.rewriteCheckpoint("demo/main", func(cp *state.Checkpoint) {
				cp.Snapshot = f.git.get(sha).Snapshot
				cp.Delivery.SHA, cp.Delivery.Snapshot = sha, cp.Snapshot
			})
		},
		"loop/demo moved on": func(f *flow) {
			files := f.git.get(f.git.refs["refs/heads/loop/demo"]).Files
			files["NOTES"] = "by hand\n"
			f.git.refs["refs/heads/loop/demo"] = f.git.commit(f.git.refs["refs/heads/loop/demo"], files, "by hand")
		},
	}
	for name, forge := range forged {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := deliver(t)
			f.head = f.git.refs["refs/heads/main"]
			forge(f)
			calls := f.ran()
			res := f.schedule(nil)
			if strings.Contains(res.summary, "nothing new to measure") || f.ran() == calls {
				t.Fatalf("the job took the record's word (agent calls %d → %d, job %v):\n%s", calls, f.ran(), res.err, res.log)
			}
			if !strings.Contains(res.log, "is ignored") {
				t.Errorf("the log does not say the record was ignored:\n%s", res.log)
			}
		})
	}
}
