package workspace

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// ReadBlob returns the content of blob h in s, checked to hash to h: the
// one blob read of the packages above that keep git objects (delivery's
// patches and checkouts, the state branch's records).
func ReadBlob(s storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) {
	return readObject(s, plumbing.BlobObject, h)
}
