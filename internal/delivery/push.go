package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/loop-action/loop-action/internal/gitremote"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/secret"
)

// Remote is a repository to push to (smart HTTP with a token as basic auth
// x-access-token, or file://).
type Remote struct{ URL, Token string }

// ErrMoved reports that a push's compare-and-swap failed: the ref is not
// at the expected old value (for a create-only push: it exists). Nothing
// on the remote was overwritten.
var ErrMoved = errors.New("the branch is not where the push expected it")

// Push sends the delivery's commit and exactly the objects the remote
// lacks for it (the commit, and the trees and blobs that differ from the
// base's along the changed paths: the remote must hold the base) and
// moves ref ("refs/heads/…") from old (a full commit id; "" creates the
// branch, which must not exist) to the commit, in one exchange whose ref
// update is the compare-and-swap. When the branch is elsewhere the error
// wraps ErrMoved (and the server's message, when it refused the update);
// any other refusal is an error that does not. The token never appears
// in an error, and a delivery whose objects hold it is never sent.
func (d *Delivery) Push(ctx context.Context, r Remote, ref, old string) (err error) {
	defer wrap(&err, "deliver %s to %q", phrase.Short(d.SHA), ref)
	name, err := branchRef(ref)
	if err != nil {
		return err
	}
	expect := plumbing.ZeroHash
	if old != "" {
		if !fullSHA(old) {
			return fmt.Errorf("old %q is not a full commit id", old)
		}
		expect = plumbing.NewHash(old)
	}
	objs, err := gitremote.NewObjects(d.entries, d.tree, d.baseTree)
	if err != nil {
		return err
	}
	objs = append(objs, d.commit)
	if err := d.checkToken(objs, r.Token); err != nil {
		return err
	}
	rem, err := gitremote.Open(r.URL, r.Token)
	if err != nil {
		return err
	}
	err = rem.Push(ctx, d.st, name, expect, d.commit, objs)
	switch {
	case errors.Is(err, gitremote.ErrRefused):
		if tip, terr := rem.Tip(ctx, name); terr == nil && tip != expect {
			return fmt.Errorf("%w: %w", ErrMoved, err)
		}
		return fmt.Errorf("the remote refused the update: %w", err)
	case errors.Is(err, gitremote.ErrRace):
		return fmt.Errorf("%w: %w", ErrMoved, err)
	}
	return err
}

// branchRef checks that ref names a branch.
func branchRef(ref string) (plumbing.ReferenceName, error) {
	name := plumbing.ReferenceName(ref)
	if !name.IsBranch() || name.Validate() != nil || name == "refs/heads/" {
		return "", fmt.Errorf("ref %q is not a branch (refs/heads/NAME)", ref)
	}
	return name, nil
}

// minToken is the shortest token the objects are searched for: a shorter
// one would match ordinary text.
const minToken = 8

// checkToken refuses to send objects that hold the token in any of the
// forms package secret knows, the basic auth header's base64 among them.
func (d *Delivery) checkToken(objs []plumbing.Hash, token string) error {
	if len(token) < minToken {
		return nil
	}
	held := secret.NewFinder(secret.Append(nil, "the push token", token))
	for _, h := range objs {
		obj, err := d.st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return err
		}
		r, err := obj.Reader()
		if err != nil {
			return err
		}
		found, err := held.FindIn(r)
		r.Close()
		switch {
		case err != nil:
			return err
		case found != "":
			return fmt.Errorf("refusing to push: the %s %s holds the push token", obj.Type(), h)
		}
	}
	return nil
}

// Tip returns the commit ref is at on the remote, "" when it does not
// exist.
func Tip(ctx context.Context, r Remote, ref string) (string, error) {
	name, err := branchRef(ref)
	if err != nil {
		return "", err
	}
	rem, err := gitremote.Open(r.URL, r.Token)
	if err != nil {
		return "", err
	}
	tip, err := rem.Tip(ctx, name)
	if err != nil || tip.IsZero() {
		return "", err
	}
	return tip.String(), nil
}
