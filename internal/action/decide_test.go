package action

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// TestDecide is the status rule, a row for each way a job concludes
// (docs/action.md, Commit status): what the head's loop/<name> status
// becomes, whether the job may pass, and which delivery starts.
func TestDecide(t *testing.T) {
	t.Parallel()
	const head, snap, tree = "hhhhhhh111", "ssssss2222", "tttttt3333"
	cp := func(d *state.Delivery) *state.Checkpoint {
		return &state.Checkpoint{RunID: "demo/pr-7", Iteration: 2, Snapshot: snap, Delivery: d}
	}
	pushed := &state.Delivery{Kind: kindCertified, Outcome: outcomePushed, SHA: "ddddddd444", Ref: "loop/demo"}
	ran := func(f facts) facts {
		f.from, f.ran, f.head, f.git = fromRun, true, head, true
		if f.cp == nil {
			f.cp = cp(nil)
		}
		if f.mode == "" {
			f.mode = DeliverPush
		}
		return f
	}
	success := func(f facts) facts { f.status = state.Success; return ran(f) }
	again := func(f facts) facts {
		f.from, f.head, f.git, f.cp, f.mode, f.why = fromRecheck, head, true, cp(nil), DeliverPush, "the loop's own"
		return f
	}
	push := func(f facts) facts {
		f.from, f.head, f.git, f.cp, f.mode = fromPush, head, true, cp(nil), DeliverPush
		return f
	}
	type want struct {
		status, desc    string
		success, keep   bool
		record, partial bool
		deliver         string
		note            string // in the notes
	}
	tests := []struct {
		name string
		f    facts
		want want
	}{
		{"over: a run recorded as over passes nothing and sets nothing",
			facts{from: fromRun, cp: cp(nil), head: head, git: true}, want{}},
		{"over, delivered beside and verified: the job passes, no status",
			facts{from: fromRun, beside: true, cp: cp(pushed), head: head, git: true},
			want{keep: true, note: "delivered in ddddddd to `loop/demo`"}},
		{"stopped: failure, saying how",
			ran(facts{status: state.NoProgress, told: "no-progress after 2 iterations: x"}),
			want{status: "failure", desc: "no-progress after 2 iterations: x"}},
		{"awaiting review: pending",
			ran(facts{status: state.AwaitingReview, told: "awaiting review"}),
			want{status: "pending", desc: "awaiting review"}},
		{"stopped, partial asked, pushes: the work is kept",
			ran(facts{status: state.TokenBudget, told: "t", partial: true}),
			want{status: "failure", desc: "t", partial: true}},
		{"stopped, partial asked, pull-request: the work is kept",
			ran(facts{status: state.Escalated, told: "t", partial: true, mode: DeliverPullRequest}),
			want{status: "failure", desc: "t", partial: true}},
		{"stopped, partial asked, deliver comment: nothing kept",
			ran(facts{status: state.NoProgress, told: "t", partial: true, mode: DeliverComment}),
			want{status: "failure", desc: "t"}},
		{"stopped, partial asked, deliver none: nothing kept",
			ran(facts{status: state.NoProgress, told: "t", partial: true, mode: DeliverNone}),
			want{status: "failure", desc: "t"}},
		{"cancelled (not a stop for good), partial asked: nothing kept",
			ran(facts{status: state.Cancelled, told: "t", partial: true}),
			want{status: "failure", desc: "t"}},
		{"stopped, partial asked, no git: nothing kept",
			ran(facts{status: state.NoProgress, told: "t", partial: true, git: false}).noGit(),
			want{status: "failure", desc: "t"}},
		{"success, the head is the snapshot: success on it",
			success(facts{headTree: snap}),
			want{status: "success", success: true, desc: "certified: snapshot ssssss2 at iteration 2 of demo/pr-7"}},
		{"success, no git delivery: failure, the work kept",
			success(facts{headTree: snap}).noGit(),
			want{status: "failure", desc: "snapshot ssssss2 certified, not delivered: no git delivery", record: true, note: "no git delivery"}},
		{"success, the head's tree unreadable: failure",
			success(facts{treeErr: "boom"}),
			want{status: "failure", desc: "snapshot ssssss2 certified, but the head's tree could not be read", note: "could not be read (boom)"}},
		{"success, a fix: pushed",
			success(facts{headTree: tree}), want{deliver: DeliverPush}},
		{"success, a fix: a pull request",
			success(facts{headTree: tree, mode: DeliverPullRequest}), want{deliver: DeliverPullRequest}},
		{"success, a fix, deliver comment: the diff posted",
			success(facts{headTree: tree, mode: DeliverComment}), want{deliver: DeliverComment}},
		{"success, a fix, deliver none: failure, the work kept",
			success(facts{headTree: tree, mode: DeliverNone}),
			want{status: "failure", desc: "fix certified (snapshot ssssss2), not delivered (deliver: none)", record: true, note: "`deliver: none`"}},
		{"success, a fix this generation pushed already: failure, no second delivery",
			success(facts{headTree: tree, cp: cp(&state.Delivery{Kind: kindCertified, Outcome: outcomeMoved})}),
			want{status: "failure", desc: "fix certified; this generation already delivered", note: "already delivered once (moved)"}},
		{"success, a fix posted before: delivered again",
			success(facts{headTree: tree, cp: cp(&state.Delivery{Kind: kindCertified, Outcome: outcomePosted})}), want{deliver: DeliverPush}},
		{"success, a fix kept before: delivered again",
			success(facts{headTree: tree, cp: cp(&state.Delivery{Kind: kindCertified, Outcome: outcomeKept})}), want{deliver: DeliverPush}},
		{"success, only partial work delivered before: delivered",
			success(facts{headTree: tree, cp: cp(&state.Delivery{Kind: kindPartial, Outcome: outcomePushed})}), want{deliver: DeliverPush}},
		{"recheck holds on the head's tree: success",
			again(facts{success: true, measured: tree, headTree: tree}),
			want{status: "success", success: true, desc: "certified again at iteration 0: snapshot tttttt3", note: "measured again"}},
		{"recheck holds on another tree: failure",
			again(facts{success: true, measured: snap, headTree: tree}),
			want{status: "failure", desc: "the delivered commit does not pass when measured again"}},
		{"recheck holds, the head's tree unreadable: failure",
			again(facts{success: true, measured: tree, headTree: tree, treeErr: "x"}),
			want{status: "failure", desc: "the delivered commit does not pass when measured again"}},
		{"recheck fails: failure",
			again(facts{measured: tree, headTree: tree}),
			want{status: "failure", desc: "the delivered commit does not pass when measured again"}},
		{"recheck fails only for judges, GitHub shows the success: the status stays, the job passes",
			again(facts{measured: tree, headTree: tree, onlyJudges: true}),
			want{keep: true, note: "the status the delivering job set stays"}},
		{"recheck fails only for judges, no success on GitHub: failure",
			again(facts{measured: tree, headTree: tree, onlyJudges: true, onGitHub: "no status"}),
			want{status: "failure", desc: "only judge checks fail, and no certified success of this loop is on this commit", note: "(no status)"}},
		{"/loop push, the restored workspace is another snapshot: failure",
			push(facts{measured: tree, success: true}),
			want{status: "failure", desc: "/loop push: the stored workspace is not the certified one"}},
		{"/loop push, the gate does not hold again: failure",
			push(facts{measured: snap}),
			want{status: "failure", desc: "/loop push: the gate does not hold when measured again"}},
		{"/loop push, verified: pushed",
			push(facts{measured: snap, success: true, headTree: tree}), want{deliver: DeliverPush}},
		{"/loop push, the head is the snapshot: success on it",
			push(facts{measured: snap, success: true, headTree: snap}),
			want{status: "success", success: true, desc: "certified: snapshot ssssss2 at iteration 2 of demo/pr-7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := decide(tt.f)
			got := want{status: a.status, desc: a.desc, success: a.success, keep: a.keep, record: a.record, partial: a.partial, deliver: a.deliver, note: tt.want.note}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
			if notes := strings.Join(a.notes, "\n"); !strings.Contains(notes, tt.want.note) {
				t.Errorf("the notes do not say %q:\n%s", tt.want.note, notes)
			}
			if a.success && a.status != "success" || a.deliver != "" && (a.status != "" || a.success) {
				t.Errorf("inconsistent actions %+v", a)
			}
		})
	}
}

// noGit is f without a Git delivery.
func (f facts) noGit() facts { f.git = false; return f }

// TestWithDecisionsNeverRevivesAVoidMeasurement: a measurement outside the
// run that is void (its verdicts fail every check) stays failed when the
// run's review decisions are applied; one that counts is ruled on again
// with them.
func TestWithDecisionsNeverRevivesAVoidMeasurement(t *testing.T) {
	t.Parallel()
	cfg, err := loop.Parse("loop.toml", []byte(`name = "demo"
[stop]
max_wall_clock = "5m"
[[goal]]
name = "ui"
  [[goal.check]]
  type = "manual"
`))
	if err != nil {
		t.Fatal(err)
	}
	failed := []gate.Verdict{{Goal: "ui", Blocking: true, Total: 1, Checks: []gate.CheckVerdict{{Type: "manual", Status: gate.Fail, Evidence: "measurement void: x"}}}}
	decisions := []gate.Decision{{Goal: "ui", Approved: true, By: "writer", Snapshot: "s1"}}
	ev := gate.Evidence{Snapshot: "s1", Void: "unreproducible bytes"}
	if got := withDecisions(cfg, ev, failed, decisions); gate.OverallSuccess(cfg, got) {
		t.Errorf("a void measurement passes with the decisions: %+v", got)
	}
	ev.Void = ""
	if got := withDecisions(cfg, ev, failed, decisions); !gate.OverallSuccess(cfg, got) {
		t.Errorf("the decisions do not count on a measurement that does: %+v", got)
	}
	if got := withDecisions(cfg, ev, failed, nil); gate.OverallSuccess(cfg, got) {
		t.Errorf("without decisions the measured verdicts change: %+v", got)
	}
}
