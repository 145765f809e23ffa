package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/secret"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
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
	c.j.pub().status(ctx, c.s, "failure", r.status)
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
	var why *refusal
	var patch string
	switch {
	case errors.Is(err, secret.ErrHeld):
		why = c.buildRefusal(err)
	case err == nil:
		if why = c.secretRefusal(paths(b.Changes)); why == nil {
			patch, err = b.Patch()
		}
	}
	switch {
	case why != nil:
		dv.say("%s. Not posted either: %s.", lead, why.why)
		j.pub().status(ctx, s, "failure", why.status)
		return
	case err != nil:
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

// secretScan finds what delivered work must never carry: the value of a
// provider's env variable, or of a token this job holds, in any form the
// masker knows (package secret: raw, JSON-escaped, hex, URL-encoded,
// base64 at every alignment).
type secretScan struct {
	secrets []secret.Secret
	mask    func(string) string
	find    *secret.Finder
}

// scanner is the scan for the run's config and this job's tokens.
func (j *job) scanner(cfg *loop.Config) secretScan {
	secrets := runner.Secrets(cfg, j.env.Environ)
	tokens := map[string]string{"github-token": j.in.Token, "push-token": j.in.PushToken,
		"ACTIONS_RUNTIME_TOKEN": j.env.Getenv("ACTIONS_RUNTIME_TOKEN")}
	for _, name := range slices.Sorted(maps.Keys(tokens)) {
		secrets = secret.Append(secrets, name, tokens[name])
	}
	return secretScan{secrets: secrets, mask: secret.Mask(secrets), find: secret.NewFinder(secrets)}
}

// found reports whether text holds a secret.
func (sc secretScan) found(text string) bool { return sc.find.Find([]byte(text)) != "" }

// first names the first of paths in root whose path, content, or link
// target holds a secret, or "". A path that cannot be read counts as
// holding one: what cannot be checked is not delivered.
func (sc secretScan) first(root string, paths []string) (string, error) {
	if sc.find.None() {
		return "", nil
	}
	r, err := workspace.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	for _, p := range paths {
		if sc.found(p) {
			return p, nil
		}
		held, err := sc.file(r, p)
		if held || err != nil {
			return p, err
		}
	}
	return "", nil
}

// file scans one path: a link's target, or a file's content as a stream
// (secret.Finder.FindIn). A path that no longer exists holds nothing.
func (sc secretScan) file(r *os.Root, rel string) (bool, error) {
	fi, err := r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("scan %q for secrets: %w", rel, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := r.Readlink(rel)
		if err != nil {
			return false, fmt.Errorf("scan %q for secrets: %w", rel, err)
		}
		return sc.found(target), nil
	}
	f, _, err := workspace.OpenFile(r, rel)
	if err != nil {
		return false, fmt.Errorf("scan %q for secrets: %w", rel, err)
	}
	defer f.Close()
	name, err := sc.find.FindIn(f)
	return name != "", err
}

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
