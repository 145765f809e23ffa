package state

import (
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// recentBlobs keeps the content of the small blobs stored lately, by id,
// up to maxRecentBytes in all, the oldest dropped first. A save that
// consolidates a hundred (see fanPack) reads the files the saves before it
// stored: from here, that costs nothing, where the local repository costs
// opening a pack file for each (go-git keeps none open), several
// milliseconds a hundred. Blobs are immutable: an entry is right as long
// as it is kept.
type recentBlobs struct {
	data  map[plumbing.Hash][]byte
	order []plumbing.Hash // oldest first
	size  int
}

const (
	maxRecentBlob  = 64 << 10 // larger blobs are not kept
	maxRecentBytes = 8 << 20  // three hundreds of files of 20 KiB each
)

// add keeps a copy of blob h's content data.
func (r *recentBlobs) add(h plumbing.Hash, data []byte) {
	if len(data) > maxRecentBlob {
		return
	}
	if r.data == nil {
		r.data = map[plumbing.Hash][]byte{}
	}
	if _, ok := r.data[h]; ok {
		return
	}
	r.data[h] = slices.Clone(data)
	r.order = append(r.order, h)
	r.size += len(data)
	for r.size > maxRecentBytes {
		old := r.order[0]
		r.order = r.order[1:]
		r.size -= len(r.data[old])
		delete(r.data, old)
	}
}

// get returns a copy of blob h's content, if it is kept.
func (r *recentBlobs) get(h plumbing.Hash) ([]byte, bool) {
	data, ok := r.data[h]
	if !ok {
		return nil, false
	}
	return slices.Clone(data), true
}
