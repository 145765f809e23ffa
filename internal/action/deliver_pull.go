package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
)

// openPull opens the pull request that carries the work delivered to
// branch, into the branch the run is on, with the report as its body; or
// updates the one already open from branch, so that runs never open a
// second.
func (c *conclusion) openPull(ctx context.Context, branch string) {
	j, s, dv := c.j, c.s, c.dv
	if j.client == nil {
		dv.say("No pull request was opened for `%s`: input github-token is empty.", branch)
		return
	}
	title := fmt.Sprintf("loop %s: certified work of run %s", s.cfg.Name, s.runID)
	r := j.pub().newReport(ctx, s, dv.out)
	r.Delivery = dv.notes
	_, body, _ := strings.Cut(r.Markdown(commentLimit), "\n") // without the sticky marker
	n, err := j.client.OpenPullFor(ctx, j.owner, j.repo, branch)
	switch {
	case err == nil && n > 0:
		err = j.client.EditPull(ctx, j.owner, j.repo, n, title, body)
	case err == nil:
		n, err = j.client.CreatePull(ctx, j.owner, j.repo, branch, s.branch, title, body)
	}
	if err != nil {
		j.a.Warningf("open the pull request from %s: %s", branch, j.mask(err.Error()))
		dv.say("The pull request from `%s` into `%s` could not be opened or updated (%s).", branch, s.branch, j.errText(s, err))
		j.pub().status(ctx, s, "failure", "fix pushed to "+branch+"; its pull request could not be opened")
		return
	}
	dv.pull = n
	dv.say("**Fix in pull request #%d**, from `%s` into `%s`.", n, branch, s.branch)
	j.pub().status(ctx, s, "failure", fmt.Sprintf("fix in pull request #%d", n))
}

// partialStop reports whether a run stopped for good without success:
// its work is worth keeping.
func partialStop(st state.Status) bool {
	return st == state.NoProgress || st == state.Escalated || st.BudgetStop()
}

// partial keeps the work of a run that stopped without success on the
// branch loop-partial/<run id> (never the pull request's), when [deliver]
// partial asks and this job's deliver pushes. What a delivery never pushes
// is left out of it; a secret stops it.
func (c *conclusion) partial(ctx context.Context) {
	j, s, cp, dv := c.j, c.s, c.cp, c.dv
	branch := "loop-partial/" + s.runID
	subject := fmt.Sprintf("loop %s: partial work at iteration %d (%s)", s.cfg.Name, cp.Iteration, cp.Status)
	b, err := j.git.Build(ctx, c.spec(excluded(s.cfg), subject))
	switch {
	case err != nil:
		dv.say("The run's work could not be kept: %s.", c.buildRefusal(err).why)
		return
	case len(b.Changes) == 0:
		dv.say("The run changed nothing worth keeping on `%s`.", branch)
		return
	}
	if why := c.secretRefusal(paths(b.Changes)); why != nil {
		dv.say("The run's work was not kept: %s.", why.why)
		return
	}
	d := state.Delivery{Kind: kindPartial, Mode: DeliverPush, Outcome: outcomePushed, Ref: branch, SHA: b.SHA, Base: s.head, Snapshot: cp.Snapshot, At: j.env.Now().UTC()}
	switch err := c.pushOver(ctx, b, branch); {
	case errors.Is(err, ErrMoved):
		d.Outcome = outcomeMoved
		dv.say("The run's work was not kept: `%s` moved while it was pushed.", branch)
	case err != nil:
		d.Outcome = outcomeFailed
		dv.say("The run's work could not be pushed to `%s` (%s).", branch, j.errText(s, err))
	default:
		dv.partial = branch
		dv.say("The run stopped without success (%s: %s). Its work at iteration %d is kept on [`%s`](%s) as %s; it is not certified.",
			cp.Status, Verbatim(cp.StopDetail), cp.Iteration, branch, c.treeURL(branch), phrase.Short(b.SHA))
		if len(b.Excluded) > 0 {
			dv.say("Left out of it: %s.", c.shownPaths(b.Excluded))
		}
	}
	c.record(ctx, d)
}

// treeURL is where a branch of the repository is browsed.
func (c *conclusion) treeURL(branch string) string {
	j := c.j
	return fmt.Sprintf("%s/%s/%s/tree/%s", strings.TrimSuffix(j.ctx.ServerURL, "/"), j.owner, j.repo, branch)
}

// pushOver pushes b to branch where it is now: a compare-and-swap on the
// tip read just before ("" when the branch does not exist yet).
func (c *conclusion) pushOver(ctx context.Context, b *Built, branch string) error {
	j := c.j
	old, err := j.git.Tip(ctx, j.pub().pushRemote(), "refs/heads/"+branch)
	if err != nil {
		return err
	}
	return b.Push(ctx, j.pub().pushRemote(), "refs/heads/"+branch, old)
}
