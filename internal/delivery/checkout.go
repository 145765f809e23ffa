package delivery

import (
	"context"
	"errors"
	"fmt"

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
// — with the delivery's tree diff. It writes nothing: the root's objects are
// hashed into memory. It stops when ctx is done.
func CheckoutChanges(ctx context.Context, root, sha string, k workspace.Checkout) (_ Checkout, err error) {
	defer wrap(&err, "compare %q with commit %q", root, sha)
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
	var edits []edit
	if err := d.diff(d.view, hashOf(snap), "", &edits); err != nil {
		return Checkout{}, err
	}
	co := Checkout{}
	if ref, err := d.repo.Head(); err == nil {
		co.Head = ref.Hash().String()
	}
	for _, e := range edits {
		_, inView, err := d.lookup(d.view, e.path)
		if err != nil {
			return Checkout{}, err
		}
		c := Change{Path: e.path, Kind: Modified}
		switch {
		case e.to == nil:
			c.Kind = Deleted
		case !inView:
			c.Kind = Added
		}
		co.Changes = append(co.Changes, c)
	}
	sortChanges(co.Changes)
	return co, nil
}

// CommitSnapshot returns the snapshot a checkout of commit sha (in root's
// .git) would have in the loop root root: what package workspace computes
// for the files on disk, with root's .git/info/exclude. It writes nothing.
func CommitSnapshot(root, sha string) (_ string, err error) {
	defer wrap(&err, "snapshot of commit %q", sha)
	if !fullSHA(sha) {
		return "", errors.New("not a full commit id")
	}
	d, err := open(context.Background(), root, sha) // reads the commit's trees only, which the depth limit bounds
	if err != nil {
		return "", err
	}
	return d.view.String(), nil
}
