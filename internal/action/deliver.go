package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
)

// Outcomes of a delivery, as a checkpoint records them.
const (
	outcomePushing = "pushing"
	outcomePushed  = "pushed"
	outcomeMoved   = "moved"
	outcomeFailed  = "failed"
	outcomeRefused = "refused"
	outcomePosted  = "posted"
	outcomeKept    = "kept" // deliver: none
)

// conclusion carries out a delivery the status rule decided, for one
// session and its checkpoint, and gathers what became of it in dv.
type conclusion struct {
	j  *job
	s  *session
	cp *state.Checkpoint
	dv *delivery
}

// delivery is the record of the certified work as kept with outcome.
func (c *conclusion) delivery(outcome string) state.Delivery {
	return state.Delivery{Kind: kindCertified, Mode: c.dv.mode, Outcome: outcome, Base: c.s.head, Snapshot: c.cp.Snapshot, At: c.j.env.Now().UTC()}
}

// push builds the certified commit and pushes it: onto the
// branch (push) or to a loop branch with a pull request (pull-request).
// What may not be pushed is refused before anything is.
func (c *conclusion) push(ctx context.Context) {
	j, s, dv := c.j, c.s, c.dv
	branch, err := c.target()
	if err != nil {
		dv.say("Nothing was pushed: %s.", err)
		j.pub().status(ctx, s, "failure", "fix certified, not pushed: "+err.Error())
		return
	}
	b, why := c.buildCertified(ctx)
	if why != nil {
		c.refuse(ctx, why)
		return
	}
	old := s.head
	if branch != s.branch {
		if old, err = j.git.Tip(ctx, j.pub().pushRemote(), "refs/heads/"+branch); err != nil {
			dv.say("Nothing was pushed: the tip of `%s` could not be read (%s).", branch, j.errText(s, err))
			j.pub().status(ctx, s, "failure", "fix certified, not pushed: the loop branch could not be read")
			return
		}
	}
	d, ok := c.pushFix(ctx, b, branch, old)
	if ok && dv.mode == DeliverPullRequest {
		c.openPull(ctx, branch)
		d.PullRequest = dv.pull
		c.record(ctx, d)
	}
}

// target is the branch a certified push goes to: the pull request's (or
// the run's) own branch for push, a loop branch for pull-request. Never
// the default branch, never the state branch.
func (c *conclusion) target() (string, error) {
	j, s, mode := c.j, c.s, c.dv.mode
	branch := s.branch
	if mode == DeliverPullRequest {
		branch = fixBranch(s)
	}
	switch def := field(j.ctx.Event, "repository", "default_branch"); {
	case branch == "":
		return "", errors.New("the branch to push to is unknown")
	case branch == def || (def == "" && s.pr == 0 && mode == DeliverPush):
		return "", fmt.Errorf("loop-action never pushes to the default branch %s (use `deliver: pull-request`)", Verbatim(branch))
	case branch == j.in.StateBranch:
		return "", fmt.Errorf("the branch %s is the state branch", Verbatim(branch))
	}
	return branch, nil
}

// fixBranch is where pull-request delivers: loop/<name> for a branch's
// run, loop/<name>-pr-<N> for a pull request's (into its branch).
func fixBranch(s *session) string {
	if s.pr > 0 {
		return fmt.Sprintf("loop/%s-pr-%d", s.cfg.Name, s.pr)
	}
	return "loop/" + s.cfg.Name
}

// pushRemote is the repository with the token pushes use.
func (p *publisher) pushRemote() Remote {
	return Remote{URL: p.repoURL(), Token: cmp.Or(p.in.PushToken, p.in.Token)}
}

// pushFix pushes b to branch where it is at old, once the delivery in
// flight is recorded (a job that dies while pushing leaves the record, so
// the next event knows the commit). The delivered commit gets success;
// the head, failure saying where the fix went.
func (c *conclusion) pushFix(ctx context.Context, b *Built, branch, old string) (state.Delivery, bool) {
	j, s, cp, dv := c.j, c.s, c.cp, c.dv
	d := c.delivery(outcomePushing)
	d.Ref, d.SHA = branch, b.SHA
	if err := s.run.RecordDelivery(ctx, d); err != nil {
		dv.say("Nothing was pushed: the delivery could not be recorded on the state branch first (%s).", j.errText(s, err))
		j.pub().status(ctx, s, "failure", "fix certified, not pushed: the state branch could not be written")
		return d, false
	}
	if branch == s.branch {
		j.pub().status(ctx, s, "pending", "delivering the fix to this branch")
	}
	err := b.Push(ctx, j.pub().pushRemote(), "refs/heads/"+branch, old)
	switch {
	case errors.Is(err, ErrMoved):
		d.Outcome = outcomeMoved
		dv.say("**The branch moved; nothing pushed.** `%s` is no longer at %s, so the fix (snapshot `%s`) was not pushed and nothing was overwritten; the next event on the new head starts a new generation.",
			branch, orShort(old, "(absent)"), phrase.Short(cp.Snapshot))
		j.pub().status(ctx, s, "failure", "the branch moved; nothing pushed")
	case err != nil:
		d.Outcome = outcomeFailed
		dv.say("The push to `%s` failed: %s. Nothing was delivered.", branch, j.errText(s, err))
		j.a.Warningf("push the certified fix to %s: %s", branch, j.mask(err.Error()))
		j.pub().status(ctx, s, "failure", "the fix could not be pushed")
	default:
		d.Outcome = outcomePushed
		dv.success, dv.sha, dv.ref = true, b.SHA, branch
		dv.say("**Fixed in %s, pushed to `%s`.** Its tree is the certified snapshot `%s`, so it carries `loop/%s` success; %s does not.",
			phrase.Short(b.SHA), branch, phrase.Short(cp.Snapshot), s.cfg.Name, phrase.Short(s.head))
		j.pub().setStatus(ctx, s, b.SHA, "success", certifiedText(cp))
		if branch == s.branch {
			j.pub().status(ctx, s, "failure", fmt.Sprintf("fixed in %s pushed to this branch", phrase.Short(b.SHA)))
		}
	}
	c.record(ctx, d)
	return d, d.Outcome == outcomePushed
}

func orShort(sha, none string) string {
	if sha == "" {
		return none
	}
	return phrase.Short(sha)
}

// record saves where the work went; a failure is a warning (the push is
// done, or was never made).
func (c *conclusion) record(ctx context.Context, d state.Delivery) {
	if err := c.s.run.RecordDelivery(ctx, d); err != nil {
		c.j.a.Warningf("record the delivery: %s", c.j.mask(err.Error()))
	}
}

// commitMessage is the delivered commit's message: [deliver] message, then
// the trailers.
func commitMessage(cfg *loop.Config, cp *state.Checkpoint, subject string) string {
	if subject == "" {
		subject = cfg.Deliver.CommitMessage(map[string]string{
			"loop": cfg.Name, "run_id": cp.RunID, "iteration": fmt.Sprint(cp.Iteration), "snapshot": phrase.Short(cp.Snapshot),
		})
	}
	return fmt.Sprintf("%s\n\nLoop-Run: %s\nLoop-Iteration: %d\nLoop-Snapshot: %s\n",
		strings.TrimRight(subject, "\n"), cp.RunID, cp.Iteration, cp.Snapshot)
}

// excluded is what a delivery never pushes: .loop/, the protected paths,
// the loop config itself, and .github/workflows/** unless allowed.
func excluded(cfg *loop.Config) func(rel string) bool {
	pats := append([]string(nil), cfg.Protect.Paths...)
	if cfg.File != "" && !path.IsAbs(cfg.File) {
		pats = append(pats, path.Clean(cfg.File))
	}
	if !cfg.Deliver.AllowWorkflows {
		pats = append(pats, ".github/workflows/**")
	}
	return func(rel string) bool {
		if rel == ".loop" || strings.HasPrefix(rel, ".loop/") {
			return true
		}
		for _, p := range pats {
			if ok, _ := doublestar.Match(p, rel); ok {
				return true
			}
		}
		return false
	}
}

// onlyLoop leaves out .loop/ alone: a diff that is posted shows all the
// certified change.
func onlyLoop(rel string) bool { return rel == ".loop" || strings.HasPrefix(rel, ".loop/") }

// A delivery a checkpoint records is the state branch's word, which anyone
// who can push to that branch can write. It counts — the head is then the
// loop's own work, measured again and never looped on, and the status the
// delivering job set may stand — only when it is verified: it names this
// job's head as the commit delivered, the head's tree is the snapshot it
// certified, and GitHub holds the loop/<name> success the delivering job
// set on the head: the newest loop/<name> status there, success, set by
// the bot (bot-login), naming that snapshot. Otherwise it is ignored, and
// the run's recorded success is measured again in a new generation (see
// generation), as any success read from the state branch is.
//
// A branch's run (schedule, workflow_dispatch) delivers beside its head:
// onto loop/<name>, whose pull request then carries the work, while the
// head stays as it was. Such a record counts when the remote's branch
// still points at the commit it names, that commit's parent is recorded
// as this job's head, and GitHub holds the loop's success on it as above:
// the run then rests until its pull request is merged (the head moves)
// or the branch moves (its work is no longer what the loop delivered).

// verifyDelivery checks the delivery the session's checkpoint records, if
// any, before the job decides anything on it: s.delivered says it was
// verified, s.unverified why it was ignored. Only an API that cannot be
// read is an error.
func (j *job) verifyDelivery(ctx context.Context, s *session) error {
	cp := s.checkpoint()
	if cp == nil || cp.Delivery == nil || cp.Delivery.Kind != kindCertified ||
		(cp.Delivery.Outcome != outcomePushed && cp.Delivery.Outcome != outcomePushing) {
		return nil
	}
	why, err := deliveredHere(ctx, j, s, cp.Delivery)
	if err != nil {
		return err
	}
	if why == "" {
		s.delivered = cp.Delivery.SHA == s.head
		s.beside = !s.delivered
		return nil
	}
	s.unverified = why
	j.a.Warningf("the delivery that the state branch records for run %s is ignored: %s", s.runID, j.mask(why))
	return nil
}

// deliveredHere says why d, the checkpoint's certified delivery, is not
// verified as the delivery of this job's head (or, beside it, onto
// another branch: d.Ref), or "".
func deliveredHere(ctx context.Context, j *job, s *session, d *state.Delivery) (string, error) {
	beside := s.head != "" && d.SHA != s.head && d.Base == s.head && d.Ref != "" && d.Ref != s.branch
	switch cp := s.checkpoint(); {
	case !beside && (s.head == "" || d.SHA != s.head):
		return fmt.Sprintf("it names %s as delivered, not this job's head %s", orShort(d.SHA, "no commit"), orShort(s.head, "(none)")), nil
	case d.Snapshot != cp.Snapshot:
		return fmt.Sprintf("it names snapshot %s, not the run's certified %s", phrase.Short(d.Snapshot), phrase.Short(cp.Snapshot)), nil
	case beside:
		return deliveredBeside(ctx, j, s, d)
	}
	tree, err := j.commitSnapshot(s.head)
	switch {
	case err != nil:
		return fmt.Sprintf("the tree of %s could not be read (%s)", phrase.Short(s.head), j.mask(err.Error())), nil
	case tree != d.Snapshot:
		return fmt.Sprintf("the tree of %s is snapshot %s, not %s", phrase.Short(s.head), phrase.Short(tree), phrase.Short(d.Snapshot)), nil
	}
	return j.pub().certifiedOnGitHub(ctx, s, s.head, d.Snapshot)
}

// deliveredBeside says why d is not verified as the delivery of this
// job's head onto d.Ref, which must still point at it, or "".
func deliveredBeside(ctx context.Context, j *job, s *session, d *state.Delivery) (string, error) {
	if j.git == nil {
		return "this loop-action has no git delivery to read the branch it names", nil
	}
	tip, err := j.git.Tip(ctx, j.pub().pushRemote(), "refs/heads/"+d.Ref)
	switch {
	case err != nil:
		return "", fmt.Errorf("read branch %s, to verify the delivery the state branch records: %w", d.Ref, err)
	case tip != d.SHA:
		return fmt.Sprintf("it names %s as delivered to %s, which points at %s", phrase.Short(d.SHA), d.Ref, orShort(tip, "nothing")), nil
	}
	return j.pub().certifiedOnGitHub(ctx, s, d.SHA, d.Snapshot)
}

// certifiedOnGitHub says why sha does not carry the loop/<name> success a
// job of this loop set, or "" when it does: the newest loop/<name> status
// on it is success, set by the bot, and names snapshot when one is given.
func (p *publisher) certifiedOnGitHub(ctx context.Context, s *session, sha, snapshot string) (string, error) {
	name := "loop/" + s.cfg.Name
	if p.api == nil {
		return fmt.Sprintf("without input github-token, the %s status of %s cannot be read", name, phrase.Short(sha)), nil
	}
	st, err := p.api.LatestStatus(ctx, p.owner, p.repo, sha, name)
	if err != nil {
		return "", fmt.Errorf("read the %s status of %s, to verify what the state branch records: %w", name, phrase.Short(sha), err)
	}
	switch {
	case st.State == "":
		return fmt.Sprintf("%s has no %s status", phrase.Short(sha), name), nil
	case st.State != "success":
		return fmt.Sprintf("%s on %s is %s, not success", name, phrase.Short(sha), st.State), nil
	case !strings.EqualFold(st.Creator, p.in.Bot):
		return fmt.Sprintf("the %s success on %s was set by %s, not by %s", name, phrase.Short(sha), cmp.Or(st.Creator, "nobody known"), p.in.Bot), nil
	case snapshot != "" && !strings.Contains(st.Description, phrase.Short(snapshot)):
		return fmt.Sprintf("the %s success on %s does not name snapshot %s", name, phrase.Short(sha), phrase.Short(snapshot)), nil
	}
	return "", nil
}
