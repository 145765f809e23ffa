package action

import (
	"context"

	gitdelivery "github.com/loop-action/loop-action/internal/delivery"
	"github.com/loop-action/loop-action/internal/workspace"
)

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
