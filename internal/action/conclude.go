package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// The status rule: loop/<name> is success on a commit only when the gate
// certified that commit's tree in this job — the snapshot its verdict was
// measured on equals the commit's snapshot (Git.CommitSnapshot). A run that
// converged without changing anything certifies its head; one that changed
// files delivers them, and the delivered commit carries the success. The
// head a run started from then gets failure, saying where the fix went.
// Nothing read from the state branch ever makes a status success.

// delivery is what a job made of its run's work: whether a commit carries
// success, where the work went, and what the report says about it.
type delivery struct {
	mode    string         // the deliver input in force for this event
	success bool           // a commit carries success from this job
	keep    bool           // nothing was refuted: the job does not fail without success
	sha     string         // the commit delivered
	ref     string         // the branch it was pushed to
	pull    int            // the pull request opened or updated for it
	partial string         // the branch a stopped run's work was kept on
	notes   []string       // Markdown of trusted text (paths through Verbatim)
	diff    string         // the certified change, posted instead of pushed
	apply   string         // the command that applies it locally
	out     runner.Outcome // what is reported: a pull request's body shows it
}

func (dv *delivery) say(format string, args ...any) {
	dv.notes = append(dv.notes, fmt.Sprintf(format, args...))
}

// Kinds of delivery, as a checkpoint records them.
const (
	kindCertified = "certified"
	kindPartial   = "partial"
)

// mode is how this event delivers: auto pushes onto a pull request's
// branch, and opens a pull request for a branch's run.
func (j *job) mode(s *session) string {
	if j.in.Deliver != DeliverAuto {
		return j.in.Deliver
	}
	if s.pr > 0 {
		return DeliverPush
	}
	return DeliverPullRequest
}

// conclude applies the status rule to the outcome of a run in this job and
// delivers what it certified. A run that was already over measured
// nothing: it changes no status, and the job does not pass on its record
// (a run that succeeded is measured again instead: see generation).
func (j *job) conclude(ctx context.Context, s *session, out runner.Outcome) delivery {
	dv := delivery{mode: j.mode(s), out: out}
	switch {
	case !out.Ran && s.beside:
		d := s.checkpoint().Delivery
		dv.keep = true
		dv.say("This run's certified work was delivered in %s to `%s`, which still holds it, with the loop's success on it; nothing new to measure on %s.",
			phrase.Short(d.SHA), d.Ref, phrase.Short(s.head))
		return dv
	case !out.Ran: // a run recorded as over, without success: what the state branch says passes no job
		return dv
	case out.Status != state.Success:
		j.partial(ctx, s, out, &dv)
		desc := j.statusText(out)
		if dv.partial != "" {
			desc += "; work kept on " + dv.partial
		}
		j.status(ctx, s, statusState(out.Status), desc)
		return dv
	}
	j.certify(ctx, s, s.checkpoint(), &dv)
	return dv
}

// certify sets success on the head when its tree is the certified
// snapshot, and otherwise delivers the certified work as dv.mode says.
func (j *job) certify(ctx context.Context, s *session, cp *state.Checkpoint, dv *delivery) {
	if j.git == nil {
		j.deliver(ctx, s, cp, dv) // says that nothing can be certified or delivered
		return
	}
	tree, err := j.commitSnapshot(s.head)
	switch {
	case err != nil:
		dv.say("The gate certified snapshot `%s`, but the tree of %s could not be read (%s), so no commit is certified.",
			phrase.Short(cp.Snapshot), phrase.Short(s.head), j.errText(s, err))
		j.status(ctx, s, "failure", fmt.Sprintf("snapshot %s certified, but the head's tree could not be read", phrase.Short(cp.Snapshot)))
	case tree == cp.Snapshot:
		dv.success = true
		j.setStatus(ctx, s, s.head, "success", certifiedText(cp))
	default:
		j.deliver(ctx, s, cp, dv)
	}
}

func (j *job) commitSnapshot(sha string) (string, error) {
	if j.git == nil {
		return "", errors.New("this loop-action has no git delivery")
	}
	return j.git.CommitSnapshot(j.workspace, sha)
}

// certifiedText is the description of success on a certified commit.
func certifiedText(cp *state.Checkpoint) string {
	return fmt.Sprintf("certified: snapshot %s at iteration %d of %s", phrase.Short(cp.Snapshot), cp.Iteration, cp.RunID)
}

// deliveredHead says why the job's head is the loop's own work, or "":
// the commit this run delivered, as its verified record says (see
// verifyDelivery; its push may not have been recorded as done), or the
// head of a pull request from a branch the loop pushes to (loop/<name>…,
// loop-partial/…), whose commits another run delivered. The loop
// measures such a head; it never runs agents on it.
func deliveredHead(s *session) string {
	switch {
	case s.head == "":
		return ""
	case s.delivered:
		return fmt.Sprintf("%s is the commit this loop delivered in run `%s`", phrase.Short(s.head), s.runID)
	case s.pr > 0 && (s.branch == "loop/"+s.cfg.Name || strings.HasPrefix(s.branch, "loop/"+s.cfg.Name+"-") || strings.HasPrefix(s.branch, "loop-partial/")):
		return fmt.Sprintf("%s is on `%s`, a branch this loop delivers to", phrase.Short(s.head), s.branch)
	}
	return ""
}

// recheck measures the loop's own work again (see deliveredHead), at iteration 0:
// no agent runs, nothing is pushed and the run's state is left as it is,
// so an event on a delivered commit never starts the loop again. The
// commit gets success when the gate holds on its tree now. A gate that
// only fails for judge checks (which need a run) leaves the status the
// delivering job set, and does not fail the job — when GitHub shows that
// success (certifiedOnGitHub): a branch's name, or a record on the state
// branch, never passes a job on its own.
func (j *job) recheck(ctx context.Context, s *session, why string) (runner.Outcome, delivery, error) {
	var decisions []gate.Decision
	if cp := s.checkpoint(); cp != nil {
		decisions = cp.Decisions
	}
	verdicts, snap, err := j.measureNow(ctx, s, decisions)
	if err != nil {
		return runner.Outcome{}, delivery{}, err
	}
	out := runner.GateOnlyOutcome(s.cfg, verdicts)
	out.RunID = s.runID
	dv := delivery{mode: j.mode(s)}
	dv.say("%s: it was measured again, with no agent and no push.", why)
	tree, terr := j.commitSnapshot(s.head)
	switch {
	case terr == nil && out.Success && snap == tree:
		dv.success = true
		j.setStatus(ctx, s, s.head, "success", fmt.Sprintf("certified again at iteration 0: snapshot %s", phrase.Short(snap)))
	case onlyJudges(verdicts):
		why := ""
		if !s.delivered { // verifyDelivery checked the record's commit already
			if why, err = j.certifiedOnGitHub(ctx, s, s.head, ""); err != nil {
				return runner.Outcome{}, delivery{}, err
			}
		}
		if why == "" {
			dv.keep = true
			dv.say("Only judge checks fail, and judges only rule in a run: the status the delivering job set stays.")
			break
		}
		dv.say("Only judge checks fail, and judges only rule in a run; but no success from a job of this loop stands on %s (%s), so it is not certified.", phrase.Short(s.head), why)
		j.status(ctx, s, "failure", "only judge checks fail, and no certified success of this loop is on this commit")
	default:
		j.status(ctx, s, "failure", "the delivered commit does not pass when measured again")
	}
	out.Success = dv.success
	return out, dv, nil
}

// measureNow measures the workspace as it is, outside the run, with the
// run's review decisions (verified when the session opened).
func (j *job) measureNow(ctx context.Context, s *session, decisions []gate.Decision) ([]gate.Verdict, string, error) {
	var ev gate.Evidence
	var err error
	j.untrusted(func() { ev, _, err = runner.Measure(ctx, s.cfg, j.workspace, j.env.Environ, j.checkout) })
	if err != nil {
		return nil, "", err
	}
	ev.Decisions = decisions
	return gate.Evaluate(s.cfg, ev), ev.Snapshot, nil
}

// onlyJudges reports whether every check that keeps a blocking goal from
// being satisfied is a judge check.
func onlyJudges(verdicts []gate.Verdict) bool {
	failing := 0
	for _, v := range verdicts {
		for _, c := range v.Checks {
			if !v.Blocking || v.Satisfied || c.Status == gate.Pass {
				continue
			}
			if c.Type != "judge" {
				return false
			}
			failing++
		}
	}
	return failing > 0
}

// generation says why the run starts afresh in this job, or "": when the
// head moved to a commit the loop did not write, and when the run already
// succeeded on this head with nothing delivered, kept or posted (or a push
// that failed or may not have happened, or a delivery record that did not
// verify) — its success is measured again (at iteration 0, before any
// agent), never taken from the state branch.
func generation(s *session) string {
	cp := s.checkpoint()
	switch {
	case cp == nil || s.head == "":
		return ""
	case cp.Commit != "" && cp.Commit != s.head:
		return fmt.Sprintf("a new generation: the head moved from %s to %s", phrase.Short(cp.Commit), phrase.Short(s.head))
	case cp.Status == state.Success && (cp.Delivery == nil || cp.Delivery.Outcome == outcomeFailed || cp.Delivery.Outcome == outcomePushing):
		return fmt.Sprintf("a new generation: the success recorded for %s is measured again, never taken from the state branch", phrase.Short(s.head))
	case cp.Status == state.Success && s.unverified != "":
		return fmt.Sprintf("a new generation: the delivery recorded for %s is ignored (%s), so its success is measured again", phrase.Short(s.head), s.unverified)
	}
	return ""
}
