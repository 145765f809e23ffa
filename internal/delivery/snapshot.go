package delivery

import (
	"context"
	"errors"
	"fmt"
)

// CommitSnapshot returns the snapshot a checkout of commit sha (in root's
// .git) would have in the loop root root: what package workspace computes
// for the files on disk, with root's .git/info/exclude. It writes nothing.
func CommitSnapshot(root, sha string) (string, error) {
	snap, err := commitSnapshot(root, sha)
	if err != nil {
		return "", fmt.Errorf("snapshot of commit %q: %w", sha, err)
	}
	return snap, nil
}

func commitSnapshot(root, sha string) (string, error) {
	if !fullSHA(sha) {
		return "", errors.New("not a full commit id")
	}
	d, err := open(context.Background(), root, sha) // reads the commit's trees only, which the depth limit bounds
	if err != nil {
		return "", err
	}
	return d.view.String(), nil
}
