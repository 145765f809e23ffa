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
// readers find both, and fanMigrate moves them.

// fanSpan holds the directory levels above a chunk, each bucket spanning
// the number of indices given; the last is the fan-out.
var fanSpan = []int{10000, 100}

// fanPath is the directories holding chunk i.
func fanPath(i int) []string {
	p := make([]string, len(fanSpan))
	for l, span := range fanSpan {
		n := i / span
		if l > 0 {
			n %= fanSpan[l-1] / span
		}
		p[l] = fmt.Sprintf("%02d", n)
	}
	return p
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

// fanGet returns the file of index i in the directory tree h, flat or
// fanned out (a consolidated bucket's files are read by fanData).
func (o *objects) fanGet(h plumbing.Hash, d indexed, i int) (plumbing.Hash, bool, error) {
	for _, p := range [][]string{append(fanPath(i), d.name(i)), {d.name(i)}} {
		e, ok, err := o.lookup(h, p)
		if err != nil || (ok && e.Mode != filemode.Dir) {
			return e.Hash, ok, err
		}
	}
	return plumbing.ZeroHash, false, nil
}

// fanLeaves returns every file of the directory tree h by name, in either
// layout (files deeper than the fan-out are not read).
func (o *objects) fanLeaves(h plumbing.Hash) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	err := o.walkLeaves(h, len(fanSpan), func(e object.TreeEntry) { out[e.Name] = e.Hash })
	return out, err
}

func (o *objects) walkLeaves(h plumbing.Hash, depth int, visit func(object.TreeEntry)) error {
	es, err := o.tree(h)
	if err != nil {
		return err
	}
	for _, e := range es {
		switch {
		case e.Mode != filemode.Dir:
			visit(e)
		case depth > 0:
			if err := o.walkLeaves(e.Hash, depth-1, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

// fanFlat reports whether the directory tree h holds files at its top: a
// checkpoint written before the fan-out.
func (o *objects) fanFlat(h plumbing.Hash) (bool, error) {
	es, err := o.tree(h)
	return slices.ContainsFunc(es, func(e object.TreeEntry) bool { return e.Mode != filemode.Dir }), err
}

// fanMigrate returns the directory tree h in the fanned layout: h itself
// when it is, else a tree holding every numbered file of h fanned out.
func (o *objects) fanMigrate(h plumbing.Hash, d indexed) (plumbing.Hash, error) {
	flat, err := o.fanFlat(h)
	if err != nil || !flat {
		return h, err
	}
	leaves, err := o.fanLeaves(h)
	if err != nil {
		return h, err
	}
	out := plumbing.ZeroHash
	for name, blob := range leaves {
		i, ok := chunkIndex(name, d.ext)
		if !ok || name != d.name(i) {
			return h, fmt.Errorf("unexpected file %q", name)
		}
		if out, err = o.fanPut(out, d, i, blob); err != nil {
			return h, err
		}
	}
	return out, nil
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
	case l < len(fanSpan) && e.Mode == filemode.Dir:
		n, err := strconv.Atoi(e.Name)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		lo = base + n*fanSpan[l]
		return lo, lo + fanSpan[l], true
	case isBucket(e, l):
		n, ok := chunkIndex(e.Name, d.ext)
		if !ok || e.Name != d.bucketName(n) || n >= fanSpan[l-1]/fanSpan[l] {
			return 0, 0, false
		}
		lo = base + n*fanSpan[l]
		return lo, lo + fanSpan[l], true
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
		for k, e := range es {
			inner := e.Mode == filemode.Dir || isBucket(e, l)
			if from, _, ok := d.span(e, l, base); ok && from >= lo && (l < len(fanSpan)) == inner {
				best, lo = k, from
			}
		}
		switch {
		case best < 0:
			return 0, false, nil
		case l == len(fanSpan):
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
