package state

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A run's ledger, summaries and log directories on the branch are fanned
// out by hundreds: chunk 12345 of the ledger is ledger/01/23/12345.jsonl,
// chunk 7 ledger/00/00/0007.jsonl (the first level is the index / 10,000,
// two digits at least; the second the hundreds within it). Checkpoints
// written before the fan-out kept the files flat (ledger/0007.jsonl):
// readers find both, and fanMigrate moves them. Below, level 0 is the
// directory's top, level 1 the hundreds (buckets) and level 2 the files.

// dirSpan and bucketSpan are how many indices a directory of level 0 and
// a bucket span.
const (
	dirSpan    = 10000
	bucketSpan = 100
)

// fanPath is the directories holding chunk i.
func fanPath(i int) []string {
	return []string{fmt.Sprintf("%02d", i/dirSpan), fmt.Sprintf("%02d", i%dirSpan/bucketSpan)}
}

// indexed is one of a run's directories of numbered files.
type indexed struct {
	name func(int) string // the file name of index i
	ext  string
}

var (
	ledgerFiles  = indexed{chunkName, ".jsonl"}
	summaryFiles = indexed{summaryName, ".md"}
	logFiles     = indexed{logChunkName, ".log"}
)

// fanMigrate returns the directory tree h in the fanned layout: h itself
// when it holds no file at its top, else a tree holding every numbered
// file of h (files deeper than the fan-out are not read) fanned out.
func (o *objects) fanMigrate(h plumbing.Hash, d indexed) (plumbing.Hash, error) {
	es, err := o.tree(h)
	if err != nil || !slices.ContainsFunc(es, func(e object.TreeEntry) bool { return e.Mode != filemode.Dir }) {
		return h, err
	}
	out := plumbing.ZeroHash
	err = o.walkLeaves(h, 2, func(e object.TreeEntry) error {
		i, ok := chunkIndex(e.Name, d.ext)
		if !ok || e.Name != d.name(i) {
			return fmt.Errorf("unexpected file %q", e.Name)
		}
		out, err = o.fanPut(out, d, i, e.Hash)
		return err
	})
	if err != nil {
		return h, err
	}
	return out, nil
}

// walkLeaves calls visit with each file of the tree h and of its
// directories down to depth, whatever their names.
func (o *objects) walkLeaves(h plumbing.Hash, depth int, visit func(object.TreeEntry) error) error {
	es, err := o.tree(h)
	if err != nil {
		return err
	}
	for _, e := range es {
		switch {
		case e.Mode != filemode.Dir:
			err = visit(e)
		case depth > 0:
			err = o.walkLeaves(e.Hash, depth-1, visit)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fanPut returns the fanned directory tree h with index i set to blob.
func (o *objects) fanPut(h plumbing.Hash, d indexed, i int, blob plumbing.Hash) (plumbing.Hash, error) {
	return o.graft(h, fanPath(i), func(es []object.TreeEntry) ([]object.TreeEntry, error) {
		return upsert(es, d.name(i), blob), nil
	})
}

// fanDrop returns the fanned directory tree h without the files numbered
// from and above (zero when nothing is left). It reads and rewrites only
// the trees on the path of from.
func (o *objects) fanDrop(h plumbing.Hash, d indexed, from int) (plumbing.Hash, error) {
	return o.dropLevel(h, d, 0, 0, from)
}

// dropLevel drops from tree h, at fan level l, whose first index is base.
func (o *objects) dropLevel(h plumbing.Hash, d indexed, l, base, from int) (plumbing.Hash, error) {
	es, err := o.tree(h)
	if err != nil {
		return h, err
	}
	next := make([]object.TreeEntry, 0, len(es))
	changed := false
	for _, e := range es {
		lo, hi, ok := d.span(e, l, base)
		switch {
		case !ok || hi <= from:
			next = append(next, e)
			continue
		case lo >= from:
		case e.Mode == filemode.Dir:
			sub, err := o.dropLevel(e.Hash, d, l+1, lo, from)
			if err != nil {
				return h, err
			}
			if !sub.IsZero() {
				e.Hash = sub
				next = append(next, e)
			}
		default: // a consolidated bucket the drop ends inside
			kept, ok, err := o.fanUnpack(e, d, lo, from)
			if err != nil {
				return h, err
			}
			if ok {
				next = append(next, kept)
			}
		}
		changed = true
	}
	switch {
	case !changed:
		return h, nil
	case len(next) == 0:
		return plumbing.ZeroHash, nil
	}
	return o.putTree(next)
}

// span returns the indices entry e at fan level l (whose first index is
// base) covers, [lo, hi): a directory of the fan-out, a consolidated
// bucket (see isBucket) or a file; not ok for names outside the layout,
// kept as they are.
func (d indexed) span(e object.TreeEntry, l, base int) (lo, hi int, ok bool) {
	switch {
	case l == 0 && e.Mode == filemode.Dir:
		n, err := strconv.Atoi(e.Name)
		return n * dirSpan, (n + 1) * dirSpan, err == nil && n >= 0
	case l == 1 && e.Mode == filemode.Dir:
		n, err := strconv.Atoi(e.Name)
		lo = base + n*bucketSpan
		return lo, lo + bucketSpan, err == nil && n >= 0 && n < dirSpan/bucketSpan
	case isBucket(e, l):
		n, ok := chunkIndex(e.Name, d.ext)
		lo = base + n*bucketSpan
		return lo, lo + bucketSpan, ok && e.Name == d.bucketName(n) && n < dirSpan/bucketSpan
	}
	i, ok := chunkIndex(e.Name, d.ext)
	return i, i + 1, ok && e.Mode != filemode.Dir && e.Name == d.name(i)
}

// fanLast returns the index of the highest-numbered file of the fanned
// directory tree h, reading one tree per level (and the consolidated
// bucket holding it, if it is one); not ok when it holds none.
func (o *objects) fanLast(h plumbing.Hash, d indexed) (int, bool, error) {
	base := 0
	for l := 0; ; l++ {
		es, err := o.tree(h)
		if err != nil {
			return 0, false, err
		}
		best, lo := -1, -1
		for k, e := range es { // the flat layout's files at level 0 do not count
			if from, _, ok := d.span(e, l, base); ok && from >= lo && (l > 0 || e.Mode == filemode.Dir) {
				best, lo = k, from
			}
		}
		switch {
		case best < 0:
			return 0, false, nil
		case l == 2:
			return lo, true, nil
		case isBucket(es[best], l):
			fs, err := o.readBucket(es[best].Hash, lo)
			if err == nil && len(fs) == 0 {
				err = fmt.Errorf("consolidated bucket %s holds no file", es[best].Name)
			}
			if err != nil {
				return 0, false, err
			}
			return fs[len(fs)-1].i, true, nil
		}
		h, base = es[best].Hash, lo
	}
}
