package action

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
)

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
	why, err := j.deliveredHere(ctx, s, cp.Delivery)
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
func (j *job) deliveredHere(ctx context.Context, s *session, d *state.Delivery) (string, error) {
	beside := s.head != "" && d.SHA != s.head && d.Base == s.head && d.Ref != "" && d.Ref != s.branch
	switch cp := s.checkpoint(); {
	case !beside && (s.head == "" || d.SHA != s.head):
		return fmt.Sprintf("it names %s as delivered, not this job's head %s", orShort(d.SHA, "no commit"), orShort(s.head, "(none)")), nil
	case d.Snapshot != cp.Snapshot:
		return fmt.Sprintf("it names snapshot %s, not the run's certified %s", phrase.Short(d.Snapshot), phrase.Short(cp.Snapshot)), nil
	case beside:
		return j.deliveredBeside(ctx, s, d)
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
func (j *job) deliveredBeside(ctx context.Context, s *session, d *state.Delivery) (string, error) {
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
