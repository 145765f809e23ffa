package state

import (
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// fanPack returns the fanned directory tree h with its lowest bucket due
// for consolidation consolidated (see bucketMagic): a bucket still a
// directory and wholly below the bucket of the tree's last file. It
// returns h itself when none is due. It reads the trees of the first
// fan level (one per 10,000 indices) and the files of the bucket it
// consolidates.
func (o *objects) fanPack(h plumbing.Hash, d indexed) (plumbing.Hash, error) {
	last, ok, err := o.fanLast(h, d)
	if err != nil || !ok {
		return h, err
	}
	top, err := o.tree(h)
	if err != nil {
		return h, err
	}
	for _, c := range o.packCandidates(top, d, bucketLo(last)) {
		fs, ok, err := o.bucketFiles(c, d)
		if err != nil {
			return h, err
		}
		if !ok {
			continue // a directory holding something else is left alone
		}
		blob, err := o.putBlob(encodeBucket(fs))
		if err != nil {
			return h, err
		}
		return o.graft(h, []string{c.parent}, func(es []object.TreeEntry) ([]object.TreeEntry, error) {
			es = slices.DeleteFunc(es, func(e object.TreeEntry) bool { return e.Name == c.bucket.Name })
			return upsert(es, d.bucketName(c.n), blob), nil
		})
	}
	return h, nil
}

// packCandidate is a bucket directory that may be consolidated.
type packCandidate struct {
	parent string           // its parent's name, at the first fan level
	bucket object.TreeEntry // the directory
	n, lo  int              // its name as a number, its first index
	// packed is the consolidated bucket of the same hundred beside the
	// directory, zero when there is none: a version before the
	// consolidation, saving from an older checkpoint, left the blob and
	// wrote new files beside it.
	packed plumbing.Hash
}

// packCandidates returns the bucket directories of the fanned tree whose
// top level is top that end at or below index below, lowest first.
func (o *objects) packCandidates(top []object.TreeEntry, d indexed, below int) []packCandidate {
	var out []packCandidate
	for _, p := range top {
		base, _, ok := d.span(p, 0, 0)
		if !ok || p.Mode != filemode.Dir || base >= below {
			continue
		}
		es, err := o.tree(p.Hash)
		if err != nil {
			continue // fanLast read this level; fanPack's graft reports it
		}
		for _, e := range es {
			lo, hi, ok := d.span(e, 1, base)
			if !ok || e.Mode != filemode.Dir || hi > below {
				continue
			}
			c := packCandidate{parent: p.Name, bucket: e, n: (lo - base) / bucketSpan, lo: lo}
			if k := slices.IndexFunc(es, func(x object.TreeEntry) bool { return x.Name == d.bucketName(c.n) && isBucket(x, 1) }); k >= 0 {
				c.packed = es[k].Hash
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b packCandidate) int { return a.lo - b.lo })
	return out
}

// bucketFiles reads the files of candidate c's directory, with those of
// the consolidated bucket beside it that the directory lacks, in order;
// not ok when the directory holds anything but files of d in its range.
func (o *objects) bucketFiles(c packCandidate, d indexed) ([]bucketFile, bool, error) {
	es, err := o.tree(c.bucket.Hash)
	if err != nil || len(es) == 0 {
		return nil, false, err
	}
	fs := make([]bucketFile, 0, len(es))
	for _, e := range es {
		i, _, ok := d.span(e, 2, c.lo)
		if !ok || i < c.lo || i >= c.lo+bucketSpan {
			return nil, false, nil
		}
		data, err := o.blob(e.Hash)
		if err != nil {
			return nil, false, err
		}
		fs = append(fs, bucketFile{i: i, data: data})
	}
	if !c.packed.IsZero() {
		old, err := o.readBucket(c.packed, c.lo)
		if err != nil {
			return nil, false, err
		}
		for _, f := range old {
			if !slices.ContainsFunc(fs, func(g bucketFile) bool { return g.i == f.i }) {
				fs = append(fs, f)
			}
		}
	}
	slices.SortFunc(fs, func(a, b bucketFile) int { return a.i - b.i })
	return fs, true, nil
}

// fanUnpack returns the consolidated bucket e, whose first index is lo,
// expanded back into its directory, holding only the files numbered below
// from (not ok when none is): a save from an older checkpoint that ends
// inside it.
func (o *objects) fanUnpack(e object.TreeEntry, d indexed, lo, from int) (object.TreeEntry, bool, error) {
	fs, err := o.readBucket(e.Hash, lo)
	if err != nil {
		return e, false, err
	}
	var es []object.TreeEntry
	for _, f := range fs {
		if f.i >= from {
			break
		}
		blob, err := o.putBlob(f.data)
		if err != nil {
			return e, false, err
		}
		es = append(es, object.TreeEntry{Name: d.name(f.i), Mode: filemode.Regular, Hash: blob})
	}
	if len(es) == 0 {
		return e, false, nil
	}
	tree, err := o.putTree(es)
	if err != nil {
		return e, false, err
	}
	return object.TreeEntry{Name: fanPath(lo)[1], Mode: filemode.Dir, Hash: tree}, true, nil
}
