package delivery

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Checkout is how a loop root differs from a checkout of a commit.
type Checkout struct {
	// Head is the commit the root's repository has checked out (its
	// HEAD), "" when it has none.
	Head string
	// Changes are the paths whose content differs, by path: Kind is
	// Added (in the root only), Deleted (in the commit only) or Modified.
	Changes []Change
}

// CheckoutChanges compares the loop root with a checkout of commit sha
// (in root's .git), both as package workspace snapshots them — without
// .loop/ and ignored files, the root's files read with its git settings k
// — with go-git's tree diff. It writes nothing: the root's objects are
// hashed into memory. It stops when ctx is done.
func CheckoutChanges(ctx context.Context, root, sha string, k workspace.Checkout) (Checkout, error) {
	co, err := checkoutChanges(ctx, root, sha, k)
	if err != nil {
		return Checkout{}, fmt.Errorf("compare %q with commit %q: %w", root, sha, err)
	}
	return co, nil
}

func checkoutChanges(ctx context.Context, root, sha string, k workspace.Checkout) (Checkout, error) {
	if !fullSHA(sha) {
		return Checkout{}, fmt.Errorf("%q is not a full commit id", sha)
	}
	d, err := open(ctx, root, sha)
	if err != nil {
		return Checkout{}, err
	}
	snap, err := workspace.NewHasherWith(root, k).WriteObjects(ctx, d.st)
	if err != nil {
		return Checkout{}, err
	}
	from, err := object.GetTree(d.st, d.view)
	if err != nil {
		return Checkout{}, err
	}
	to, err := object.GetTree(d.st, hashOf(snap))
	if err != nil {
		return Checkout{}, err
	}
	diff, err := object.DiffTree(from, to)
	if err != nil {
		return Checkout{}, err
	}
	co := Checkout{Head: checkedOut(root)}
	for _, c := range diff {
		act, err := c.Action()
		if err != nil {
			return Checkout{}, err
		}
		switch act {
		case merkletrie.Insert:
			co.Changes = append(co.Changes, Change{Path: c.To.Name, Kind: Added})
		case merkletrie.Delete:
			co.Changes = append(co.Changes, Change{Path: c.From.Name, Kind: Deleted})
		default:
			co.Changes = append(co.Changes, Change{Path: c.To.Name, Kind: Modified})
		}
	}
	sortChanges(co.Changes)
	return co, nil
}

// checkedOut is the commit root's repository has at HEAD, or "".
func checkedOut(root string) string {
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return ""
	}
	ref, err := repo.Head()
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}
