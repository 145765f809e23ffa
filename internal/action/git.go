package action

import (
	"context"

	gitdelivery "github.com/loop-action/loop-action/internal/delivery"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Git is what the action asks of git to apply the status rule and deliver
// a run's work: package delivery implements it (the composition root
// wires it into Env.Git); the decision tests hold an in-memory stand-in.
// The action decides what to build, whether a build may be pushed and
// where; an implementation decides nothing.
type Git interface {
	// Build writes, without touching the loop root or its repository's
	// refs, one commit whose parent is s.Base and whose tree is the loop
	// root's content less what s.Exclude leaves out. A file it would
	// change that holds one of s.Secrets fails it with a
	// *secret.HeldError, which names the file and the variable, never
	// the value.
	Build(ctx context.Context, s CommitSpec) (*Built, error)
	// Tip is the commit ref (a full ref name, refs/heads/…) points at on
	// the remote, or "" when it does not exist.
	Tip(ctx context.Context, r Remote, ref string) (string, error)
	// CommitSnapshot is the workspace snapshot of commit sha, found in the
	// repository of root: its tree as package workspace would snapshot a
	// checkout of it (without .loop/ and ignored files), so that it
	// compares with the snapshot the gate measured.
	CommitSnapshot(root, sha string) (string, error)
	// CheckoutChanges says how the loop root differs from a checkout of
	// commit sha, both as package workspace snapshots them (the root's
	// files read with its git settings k): the commit root's repository
	// has checked out, and the paths that differ.
	CheckoutChanges(root, sha string, k workspace.Checkout) (Checkout, error)
}

// The values Git takes and gives are package delivery's.
type (
	Checkout   = gitdelivery.Checkout
	CommitSpec = gitdelivery.Spec
	Identity   = gitdelivery.Identity
	Change     = gitdelivery.Change
	// Remote is a repository to push to, with the token to push with (as
	// x-access-token); the token never appears in an error.
	Remote = gitdelivery.Remote
)

// Built is a commit built in memory and not pushed yet.
type Built struct {
	SHA string
	// Snapshot is the snapshot a checkout of the commit would have (what
	// CommitSnapshot says of it), which compares with the gate's certified
	// snapshot: not the commit's raw tree, which keeps files the base
	// tracks that a checkout ignores.
	Snapshot string
	Changes  []Change // what it changes from its base, sorted by path
	Excluded []Change // what the root changes that Exclude left out of it
	// Patch is the unified diff from the base to the commit's tree.
	Patch func() (string, error)
	// Push makes the remote's ref point at the commit, if it points at old
	// ("" = the ref must not exist): a compare-and-swap that fails with an
	// error wrapping ErrMoved when the ref is elsewhere, and then changes
	// nothing.
	Push func(ctx context.Context, r Remote, ref, old string) error
}

// ErrMoved reports a push refused because the branch was not where the
// delivery expected it: nothing was pushed or overwritten.
var ErrMoved = gitdelivery.ErrMoved

// DeliveryGit is the action's Git on package delivery: commits built in
// memory from the loop root over the checkout's repository, pushed over
// smart HTTP with a compare-and-swap, and a commit's snapshot computed as
// package workspace computes a checkout's. It holds no state and decides
// nothing; the composition root sets it as Env.Git.
type DeliveryGit struct{}

var _ Git = DeliveryGit{}

// Build builds s's commit.
func (DeliveryGit) Build(ctx context.Context, s CommitSpec) (*Built, error) {
	d, err := gitdelivery.Build(ctx, s)
	if err != nil {
		return nil, err
	}
	return &Built{SHA: d.SHA, Snapshot: d.Snapshot, Changes: d.Changes, Excluded: d.Excluded, Patch: d.Patch, Push: d.Push}, nil
}

// Tip is the commit ref points at on the remote, "" when it is absent.
func (DeliveryGit) Tip(ctx context.Context, r Remote, ref string) (string, error) {
	return gitdelivery.Tip(ctx, r, ref)
}

// CommitSnapshot is the snapshot of a checkout of sha in root.
func (DeliveryGit) CommitSnapshot(root, sha string) (string, error) {
	return gitdelivery.CommitSnapshot(root, sha)
}

// CheckoutChanges is how root differs from a checkout of sha.
func (DeliveryGit) CheckoutChanges(root, sha string, k workspace.Checkout) (Checkout, error) {
	return gitdelivery.CheckoutChanges(context.Background(), root, sha, k) // Git.CheckoutChanges takes no context
}
