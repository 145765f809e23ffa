package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/secret"
)

// refusal is why certified work is not pushed.
type refusal struct {
	why    string // Markdown, paths as Verbatim
	status string // the head's status description
	diff   bool   // the diff is posted instead
}

// spec is the commit of the checkpoint's snapshot on the head.
func (c *conclusion) spec(exclude func(string) bool, subject string) CommitSpec {
	j, s, cp := c.j, c.s, c.cp
	d := s.cfg.Deliver
	return CommitSpec{Root: j.workspace, Base: s.head, Snapshot: cp.Snapshot, Exclude: exclude,
		Message: commitMessage(s.cfg, cp, subject), Author: Identity{Name: d.AuthorName, Email: d.AuthorEmail}, When: j.env.Now(),
		Secrets: j.scanner(s.cfg).secrets, Checkout: j.checkoutOf(s.cfg)}
}

// buildRefusal is why a commit that failed to build is not delivered. A
// secret in a file (Git.Build checks it too, next to the action's own
// scan) is named by path and variable, masked, never by value.
func (c *conclusion) buildRefusal(err error) *refusal {
	j, s := c.j, c.s
	sc := j.scanner(s.cfg)
	var se *secret.HeldError
	if errors.As(err, &se) {
		if why := c.secretRefusal([]string{se.Path}); why != nil {
			return why
		}
		return &refusal{why: fmt.Sprintf("%s holds the value of the secret %s, so nothing is pushed or posted", Verbatim(sc.mask(se.Path)), Verbatim(se.Variable)),
			status: "fix not delivered: a file holds a secret"}
	}
	return &refusal{why: fmt.Sprintf("the commit could not be built (%s)", j.errText(s, err)),
		status: "fix certified, not pushed: the commit could not be built"}
}

// buildCertified builds the commit of the certified snapshot on the head
// and checks that it may be pushed: no file it would change holds a
// secret, it leaves nothing out, and its tree is exactly the snapshot the
// gate certified (so that it may carry success).
func (c *conclusion) buildCertified(ctx context.Context) (*Built, *refusal) {
	j, s, cp := c.j, c.s, c.cp
	b, err := j.git.Build(ctx, c.spec(excluded(s.cfg), ""))
	if err != nil {
		return nil, c.buildRefusal(err)
	}
	if why := c.secretRefusal(append(paths(b.Changes), paths(b.Excluded)...)); why != nil {
		return nil, why
	}
	switch {
	case len(b.Excluded) > 0:
		return nil, &refusal{diff: true,
			why: fmt.Sprintf("the certified change touches %s, which a delivery never pushes (`.loop/`, protected paths, the loop config, `.github/workflows/**` unless `[deliver] allow_workflows`), and a commit without it would not be the tree the gate certified",
				c.shownPaths(b.Excluded)),
			status: fmt.Sprintf("fix touches %s: not pushed", b.Excluded[0].Path)}
	case b.Snapshot != cp.Snapshot:
		return nil, &refusal{diff: true,
			why:    fmt.Sprintf("a checkout of the commit built would be snapshot `%s`, not the certified `%s`", phrase.Short(b.Snapshot), phrase.Short(cp.Snapshot)),
			status: "fix not pushed: the commit is not the certified tree"}
	}
	return b, nil
}

// secretRefusal refuses a delivery when one of paths holds a secret, or
// cannot be scanned. It names the path, never the value.
func (c *conclusion) secretRefusal(paths []string) *refusal {
	j, s := c.j, c.s
	sc := j.scanner(s.cfg)
	p, err := sc.first(j.workspace, paths)
	p = sc.mask(p) // a path can hold the value too
	switch {
	case err != nil && p != "":
		return &refusal{why: fmt.Sprintf("%s could not be scanned for secrets (%s), so nothing is delivered", Verbatim(p), j.errText(s, err)),
			status: "fix not delivered: a file could not be scanned for secrets"}
	case err != nil:
		return &refusal{why: fmt.Sprintf("the workspace could not be scanned for secrets (%s), so nothing is delivered", j.errText(s, err)),
			status: "fix not delivered: the workspace could not be scanned for secrets"}
	case p != "":
		return &refusal{why: fmt.Sprintf("%s holds the value of a secret (a provider's `env` variable or a token of this job), so nothing is pushed or posted", Verbatim(p)),
			status: "fix not delivered: a file holds a secret"}
	}
	return nil
}

// errText renders an error for a report: the job's tokens and the run's
// secrets masked (a path in it can hold one), its cause kept (ErrSpan).
func (j *job) errText(s *session, err error) string {
	return ErrSpan(j.scanner(s.cfg).mask(j.mask(err.Error())))
}

// shownPaths renders changed paths for a comment, each masked (a path can
// hold a secret) and as inline code.
func (c *conclusion) shownPaths(cs []Change) string {
	sc := c.j.scanner(c.s.cfg)
	out := paths(cs)
	for i, p := range out {
		out[i] = sc.mask(p)
	}
	return verbatimAll(out)
}

func paths(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

// refuse says why certified work is not pushed, posts its diff when it
// may be, and leaves the head failure.
func (c *conclusion) refuse(ctx context.Context, r *refusal) {
	lead := "Not pushed: " + r.why
	if r.diff {
		c.postDiff(ctx, lead, r.status, outcomeRefused)
		return
	}
	c.dv.say("%s.", lead)
	c.failure(ctx, r.status)
	c.record(ctx, c.delivery(outcomeRefused))
}

// postDiff puts the certified change in the report, as a diff with the
// command that applies it, instead of pushing it. A diff that would carry
// a secret is not posted either.
func (c *conclusion) postDiff(ctx context.Context, lead, status, outcome string) {
	j, s, cp, dv := c.j, c.s, c.cp, c.dv
	d := c.delivery(outcomeRefused)
	defer func() { c.record(ctx, d) }()
	b, err := j.git.Build(ctx, c.spec(onlyLoop, ""))
	if errors.Is(err, secret.ErrHeld) {
		why := c.buildRefusal(err)
		dv.say("%s. Not posted either: %s.", lead, why.why)
		j.pub().status(ctx, s, "failure", why.status)
		return
	}
	var patch string
	if err == nil {
		if why := c.secretRefusal(paths(b.Changes)); why != nil {
			dv.say("%s. Not posted either: %s.", lead, why.why)
			j.pub().status(ctx, s, "failure", why.status)
			return
		}
		patch, err = b.Patch()
	}
	if err != nil {
		dv.say("%s. Its diff could not be made either (%s).", lead, j.errText(s, err))
		j.pub().status(ctx, s, "failure", "fix certified, not delivered")
		return
	}
	where := "comment"
	if s.pr == 0 {
		where = "job summary"
	}
	dv.diff, dv.apply, d.Outcome = j.scanner(s.cfg).mask(patch), c.applyCommand(), outcome
	dv.say("%s. The certified change (snapshot `%s`, %s) is below, with the command that applies it to a clone.",
		lead, phrase.Short(cp.Snapshot), phrase.Plural(len(b.Changes), "path", "paths"))
	j.pub().status(ctx, s, "failure", cmp.Or(status, "fix posted as a diff in the "+where))
}

// applyCommand applies the run's certified workspace to a clone.
func (c *conclusion) applyCommand() string {
	j := c.j
	return j.mask(strings.Join([]string{"loop-action apply --run-id", c.s.runID, "--state", "branch:" + j.in.StateBranch, "--remote", j.pub().stateRemote()}, " "))
}
