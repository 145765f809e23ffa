package action

import (
	"context"
	"errors"

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

// Build builds s's commit. Built.Snapshot is the snapshot a checkout of
// the commit would have (what the status rule compares), not its raw
// tree. A file holding one of s.Secrets fails it with a *secret.HeldError.
func (DeliveryGit) Build(ctx context.Context, s CommitSpec) (*Built, error) {
	d, err := gitdelivery.Build(ctx, gitdelivery.Spec{
		Root: s.Root, Base: s.Base, Snapshot: s.Snapshot, Exclude: s.Exclude, Message: s.Message,
		Author: gitdelivery.Identity{Name: s.Author.Name, Email: s.Author.Email}, When: s.When, Secrets: s.Secrets,
		Checkout: s.Checkout,
	})
	if err != nil {
		return nil, err
	}
	return &Built{SHA: d.SHA, Snapshot: d.Snapshot, Changes: changes(d.Changes), Excluded: changes(d.Excluded), Patch: d.Patch,
		Push: func(ctx context.Context, r Remote, ref, old string) error {
			err := d.Push(ctx, gitdelivery.Remote{URL: r.URL, Token: r.Token}, ref, old)
			if errors.Is(err, gitdelivery.ErrMoved) {
				return sentinel{err, ErrMoved}
			}
			return err
		}}, nil
}

// Tip is the commit ref points at on the remote, "" when it is absent.
func (DeliveryGit) Tip(ctx context.Context, r Remote, ref string) (string, error) {
	return gitdelivery.Tip(ctx, gitdelivery.Remote{URL: r.URL, Token: r.Token}, ref)
}

// CommitSnapshot is the snapshot of a checkout of sha in root.
func (DeliveryGit) CommitSnapshot(root, sha string) (string, error) {
	return gitdelivery.CommitSnapshot(root, sha)
}

// CheckoutChanges is how root differs from a checkout of sha.
func (DeliveryGit) CheckoutChanges(root, sha string, k workspace.Checkout) (Checkout, error) {
	co, err := gitdelivery.CheckoutChanges(context.Background(), root, sha, k) // Git.CheckoutChanges takes no context
	if err != nil {
		return Checkout{}, err
	}
	return Checkout{Head: co.Head, Changes: changes(co.Changes)}, nil
}

func changes(cs []gitdelivery.Change) []Change {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Change, len(cs))
	for i, c := range cs {
		out[i] = Change{Path: c.Path, Kind: c.Kind}
	}
	return out
}

// sentinel is err, saying what it means in the action's terms (is is
// one of the action's sentinel errors) with delivery's message.
type sentinel struct{ err, is error }

func (e sentinel) Error() string   { return e.err.Error() }
func (e sentinel) Unwrap() []error { return []error{e.err, e.is} }
