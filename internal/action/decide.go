package action

import (
	"fmt"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
)

// The status rule: loop/<name> is success on a commit only when the gate
// certified that commit's tree in this job — the snapshot its verdict was
// measured on equals the commit's snapshot (Git.CommitSnapshot). A run that
// converged without changing anything certifies its head; one that changed
// files delivers them, and the delivered commit carries the success. The
// head a run started from then gets failure, saying where the fix went.
// Nothing read from the state branch ever makes a status success.
//
// The rule is one pure function, decide, of what the job learnt (facts);
// job.settle carries out what it decides (actions). The deliveries it
// starts (a push, a pull request, a posted diff, kept partial work) react
// to what git and GitHub answer, in deliver.go and deliver_*.go.

// How the job came to conclude.
const (
	fromRun     = iota // the run ran, or resumed, in this job
	fromRecheck        // the loop's own work, measured again (deliveredHead)
	fromPush           // /loop push: the stored workspace, measured again
)

// facts is what the job learnt before it concludes: the only input of
// the status rule. The gate's ruling is the run's (status, the
// checkpoint's snapshot), or that of the measurement this job made
// outside the run (measured, success).
type facts struct {
	from   int
	ran    bool         // fromRun: the run measured something in this job
	beside bool         // the checkpoint's delivery onto another branch was verified
	status state.Status // fromRun: how the run ended
	told   string       // fromRun: how it ended, in words (statusText)
	cp     *state.Checkpoint
	head   string // the commit the run is about
	mode   string // the deliver mode in force for this event
	git    bool   // a Git delivery is there: a commit can be certified
	// partial: [deliver] partial asks to keep a stopped run's work.
	partial bool
	// headTree is the head's snapshot; treeErr, when set, why it could
	// not be read (masked, for the report).
	headTree, treeErr string
	// measured is the snapshot this job measured outside the run, and
	// success whether the gate holds on it (fromRecheck, fromPush).
	measured string
	success  bool
	// onlyJudges: fromRecheck, only judge checks keep the gate from
	// holding; onGitHub, then, why no success of this loop stands on the
	// head ("" when one does).
	onlyJudges bool
	onGitHub   string
	why        string // fromRecheck: why the head is the loop's own work
}

// actions is what the status rule decides.
type actions struct {
	status  string // loop/<name> on the head (a pull request's only, but success): "" leaves it
	desc    string // its description
	success bool   // the head carries success from this job
	keep    bool   // nothing was refuted: the job does not fail without success
	notes
	record  bool   // record the certified work as kept (outcomeKept)
	deliver string // DeliverComment: post the diff; DeliverPush, DeliverPullRequest: push it
	partial bool   // keep the stopped run's work on loop-partial/<run id>
}

func (a *actions) fail(desc string) { a.status, a.desc = "failure", desc }

// decide is the status rule.
func decide(f facts) actions {
	var a actions
	switch {
	case f.from == fromRecheck:
		recheckRule(f, &a)
	case f.from == fromPush && f.measured != f.cp.Snapshot:
		a.say("Nothing was pushed: the workspace restored from the state branch is snapshot `%s`, not the certified `%s`.", phrase.Short(f.measured), phrase.Short(f.cp.Snapshot))
		a.fail("/loop push: the stored workspace is not the certified one")
	case f.from == fromPush && !f.success:
		a.say("Nothing was pushed: measured again in this job, the gate does not hold on the certified workspace (judge checks only rule in a run: use `deliver: auto` for such a loop).")
		a.fail("/loop push: the gate does not hold when measured again")
	case f.from == fromPush:
		certifyRule(f, &a)
	case !f.ran && f.beside:
		a.keep = true
		a.say("This run's certified work was delivered in %s to `%s`, which still holds it, with the loop's success on it; nothing new to measure on %s.",
			phrase.Short(f.cp.Delivery.SHA), f.cp.Delivery.Ref, phrase.Short(f.head))
	case !f.ran: // a run recorded as over, without success: what the state branch says passes no job
	case f.status != state.Success:
		a.status, a.desc = statusState(f.status), f.told
		a.partial = f.partial && partialStop(f.status) && f.git && (f.mode == DeliverPush || f.mode == DeliverPullRequest)
	default:
		certifyRule(f, &a)
	}
	return a
}

// certifyRule: success on the head when its tree is the certified
// snapshot; otherwise the certified work is delivered as f.mode says,
// once a generation, and the head gets failure.
func certifyRule(f facts, a *actions) {
	snap := phrase.Short(f.cp.Snapshot)
	switch d := f.cp.Delivery; {
	case !f.git:
		a.say("The gate certified snapshot `%s`, but this loop-action has no git delivery: no commit can be certified, and the fix stays in the run's workspace on the state branch.", snap)
		a.fail(fmt.Sprintf("snapshot %s certified, not delivered: no git delivery", snap))
		a.record = true
	case f.treeErr != "":
		a.say("The gate certified snapshot `%s`, but the tree of %s could not be read (%s), so no commit is certified.", snap, phrase.Short(f.head), f.treeErr)
		a.fail(fmt.Sprintf("snapshot %s certified, but the head's tree could not be read", snap))
	case f.headTree == f.cp.Snapshot:
		a.success, a.status, a.desc = true, "success", certifiedText(f.cp)
	case d != nil && d.Kind == kindCertified && d.Outcome != outcomePosted && d.Outcome != outcomeKept:
		a.say("This generation already delivered once (%s): nothing more is delivered.", d.Outcome)
		a.fail("fix certified; this generation already delivered")
	case f.mode == DeliverNone:
		a.say("The gate certified snapshot `%s`, which %s does not carry. `deliver: none`: it stays in the run's workspace on the state branch (`/loop push` pushes it).", snap, phrase.Short(f.head))
		a.fail(fmt.Sprintf("fix certified (snapshot %s), not delivered (deliver: none)", snap))
		a.record = true
	default:
		a.deliver = f.mode
	}
}

// recheckRule: the loop's own work, measured again with no agent, gets
// success when the gate holds on its tree now. A gate that only fails
// for judge checks (which need a run) leaves the status the delivering
// job set, and does not fail the job — when GitHub shows that success: a
// branch's name, or a record on the state branch, never passes a job on
// its own.
func recheckRule(f facts, a *actions) {
	a.say("%s: it was measured again, with no agent and no push.", f.why)
	switch {
	case f.treeErr == "" && f.success && f.measured == f.headTree:
		a.success, a.status = true, "success"
		a.desc = fmt.Sprintf("certified again at iteration 0: snapshot %s", phrase.Short(f.measured))
	case f.onlyJudges && f.onGitHub == "":
		a.keep = true
		a.say("Only judge checks fail, and judges only rule in a run: the status the delivering job set stays.")
	case f.onlyJudges:
		a.say("Only judge checks fail, and judges only rule in a run; but no success from a job of this loop stands on %s (%s), so it is not certified.", phrase.Short(f.head), f.onGitHub)
		a.fail("only judge checks fail, and no certified success of this loop is on this commit")
	default:
		a.fail("the delivered commit does not pass when measured again")
	}
}
