package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

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
	notes                  // Markdown of trusted text (paths through Verbatim)
	diff    string         // the certified change, posted instead of pushed
	apply   string         // the command that applies it locally
	out     runner.Outcome // what is reported: a pull request's body shows it
}

// notes are what the report's delivery section says, a paragraph each.
type notes []string

func (n *notes) say(format string, args ...any) { *n = append(*n, fmt.Sprintf(format, args...)) }

// Kinds of delivery, as a checkpoint records them.
const (
	kindCertified = "certified"
	kindPartial   = "partial"
)

// deliverMode is how this event delivers under the deliver input: auto
// pushes onto a pull request's branch, and opens a pull request for a
// branch's run.
func deliverMode(deliver string, s *session) string {
	if deliver != DeliverAuto {
		return deliver
	}
	if s.pr > 0 {
		return DeliverPush
	}
	return DeliverPullRequest
}

// conclude applies the status rule (decide) to the outcome of a run in
// this job and delivers what it certified. A run that was already over
// measured nothing: it changes no status, and the job does not pass on its
// record (a run that succeeded is measured again instead: see generation).
func (j *job) conclude(ctx context.Context, s *session, out runner.Outcome) delivery {
	f := j.facts(s, fromRun, deliverMode(j.in.Deliver, s))
	f.ran, f.beside, f.status, f.told, f.partial = out.Ran, s.beside, out.Status, statusText(out), s.cfg.Deliver.Partial
	if out.Ran && out.Status == state.Success {
		j.readHead(s, &f)
	}
	return j.settle(ctx, s, f, delivery{mode: f.mode, out: out})
}

// facts are the facts every conclusion starts from.
func (j *job) facts(s *session, from int, mode string) facts {
	return facts{from: from, cp: s.checkpoint(), head: s.head, mode: mode, git: j.git != nil}
}

// readHead learns the head's snapshot, or why it cannot be read.
func (j *job) readHead(s *session, f *facts) {
	tree, err := j.commitSnapshot(s.head)
	f.headTree = tree
	if err != nil {
		f.treeErr = j.errText(s, err)
	}
}

// settle carries out what the status rule decides on f: the notes, the
// record of work kept, the delivery it starts, and the head's status
// (after the partial work, which its description names).
func (j *job) settle(ctx context.Context, s *session, f facts, dv delivery) delivery {
	a := decide(f)
	dv.notes = append(dv.notes, a.notes...)
	dv.success, dv.keep = a.success, a.keep
	c := &conclusion{j: j, s: s, cp: f.cp, dv: &dv}
	if a.partial {
		c.partial(ctx)
	}
	switch a.deliver {
	case DeliverComment:
		c.postDiff(ctx, "`deliver: comment`: nothing is pushed", "", outcomePosted)
	case DeliverPush, DeliverPullRequest:
		c.push(ctx)
	}
	desc := a.desc
	if dv.partial != "" {
		desc += "; work kept on " + dv.partial
	}
	switch {
	case a.success:
		j.pub().setStatus(ctx, s, s.head, "success", desc)
	case a.status != "":
		j.pub().status(ctx, s, a.status, desc)
	}
	if a.record {
		c.record(ctx, c.delivery(outcomeKept))
	}
	return dv
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

// recheck measures the loop's own work again (see deliveredHead), at
// iteration 0: no agent runs, nothing is pushed and the run's state is
// left as it is, so an event on a delivered commit never starts the loop
// again. The gate must rule again here: the run's ruling was on its own
// workspace, not on this commit's tree as checked out now.
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
	f := j.facts(s, fromRecheck, deliverMode(j.in.Deliver, s))
	f.why, f.measured, f.success, f.onlyJudges = why, snap, out.Success, onlyJudges(verdicts)
	j.readHead(s, &f)
	if f.onlyJudges && !s.delivered { // verifyDelivery checked the record's commit already
		if f.onGitHub, err = j.pub().certifiedOnGitHub(ctx, s, s.head, ""); err != nil {
			return runner.Outcome{}, delivery{}, err
		}
	}
	dv := j.settle(ctx, s, f, delivery{mode: f.mode})
	out.Success = dv.success
	return out, dv, nil
}

// measureNow measures the workspace as it is, outside the run, with the
// run's review decisions (verified when the session opened).
func (j *job) measureNow(ctx context.Context, s *session, decisions []gate.Decision) ([]gate.Verdict, string, error) {
	var ev gate.Evidence
	var verdicts []gate.Verdict
	var err error
	j.log().untrusted(func() { ev, verdicts, err = runner.Measure(ctx, s.cfg, j.workspace, j.env.Environ, j.checkout) })
	if err != nil {
		return nil, "", err
	}
	return withDecisions(s.cfg, ev, verdicts, decisions), ev.Snapshot, nil
}

// withDecisions is the gate's ruling on a measurement outside the run
// (runner.Measure, verdicts) once the run's review decisions count. The
// gate is evaluated a second time only for them — runner.Measure takes no
// decisions — and never on a void measurement, whose verdicts fail every
// check whatever was approved.
func withDecisions(cfg *loop.Config, ev gate.Evidence, verdicts []gate.Verdict, decisions []gate.Decision) []gate.Verdict {
	if ev.Void != "" || len(decisions) == 0 {
		return verdicts
	}
	ev.Decisions = decisions
	return gate.Evaluate(cfg, ev)
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

// mayPush says why /loop push cannot deliver the run, or nil: it pushes
// the work of a run that succeeded, when this workflow's deliver only
// posts it (comment) or keeps it (none), and only once.
func mayPush(deliver string, cp *state.Checkpoint) error {
	switch d := cp.Delivery; {
	case deliver != DeliverNone && deliver != DeliverComment:
		return fmt.Errorf("/loop push is for `deliver: comment` or `deliver: none`; with `deliver: %s` the loop delivers certified work itself", deliver)
	case cp.Status != state.Success:
		return fmt.Errorf("the run has not succeeded (it is %s): nothing is certified to push", cp.Status)
	case d != nil && (d.Outcome == outcomePushed || d.Outcome == outcomePushing):
		return fmt.Errorf("this run's fix was already pushed: %s to %s", phrase.Short(d.SHA), Verbatim(d.Ref))
	}
	return nil
}

// pushCommand delivers, on /loop push, the workspace the run certified
// onto the pull request's branch, as deliver: push would have. The
// workspace is restored from the state branch, and measured again in this
// job: a success read from the state branch certifies nothing on its own.
// A loop with judge checks cannot be pushed this way (judges only rule in
// a run).
func (j *job) pushCommand(ctx context.Context, s *session) error {
	cp := s.run.Checkpoint()
	if err := restoreCertified(ctx, s); err != nil {
		return err
	}
	verdicts, snap, err := j.measureNow(ctx, s, cp.Decisions)
	if err != nil {
		return err
	}
	out := runner.OutcomeOf(cp)
	out.Verdicts = verdicts
	f := j.facts(s, fromPush, DeliverPush)
	f.measured, f.success = snap, gate.OverallSuccess(s.cfg, verdicts)
	if f.measured == cp.Snapshot && f.success && f.git {
		j.readHead(s, &f)
	}
	dv := j.settle(ctx, s, f, delivery{mode: DeliverPush, out: out})
	if err := j.pub().report(ctx, s, dv.out, dv, nil, true); err != nil {
		return err
	}
	return j.in.unsuccessful(dv.out, dv)
}

// restoreCertified puts the workspace of the run's last checkpoint back
// into the loop root, when the store keeps workspaces (the state branch).
func restoreCertified(ctx context.Context, s *session) error {
	rs, ok := s.store.(runner.Restorer)
	if !ok {
		return nil
	}
	if _, err := rs.Restore(ctx, s.runID); err != nil {
		return fmt.Errorf("restore the certified workspace of run %q: %w", s.runID, err)
	}
	return nil
}
