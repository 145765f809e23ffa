package state

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// build returns the root tree of the head last seen with the run's own
// files replaced by those of this save, and the run's new own entries.
// Only the trees on the run's path and its ledger, summaries and log trees
// are read and rewritten.
func (b *Branch) build(cp *Checkpoint, f saveFiles) (plumbing.Hash, []object.TreeEntry, error) {
	at := runPath(cp.RunID)
	es, err := b.objs.entries(b.tree, at...)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	own := ownOf(es)
	var prev Checkpoint // the run's checkpoint at the head; zero for a new run
	if i := slices.IndexFunc(own, func(e object.TreeEntry) bool { return e.Name == checkpointFile }); i >= 0 {
		if err := b.decode(own[i].Hash, path.Join(append(at, checkpointFile)...), &prev); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	next, err := b.runFiles(own, &prev, cp, f)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	root, err := b.objs.graft(b.tree, at, func(es []object.TreeEntry) ([]object.TreeEntry, error) {
		es = slices.DeleteFunc(es, func(e object.TreeEntry) bool { return slices.Contains(ownNames, e.Name) })
		return append(es, next...), nil
	})
	return root, next, err
}

// decode reads the JSON blob h, found at rel, into v.
func (b *Branch) decode(h plumbing.Hash, rel string, v any) error {
	data, err := b.objs.blob(h)
	if err != nil {
		return fmt.Errorf("%s: %w", b.where(rel), err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is corrupt: %w", b.where(rel), err)
	}
	return nil
}

// where names a file of the branch for people: "loop-state:runs/a/checkpoint.json".
func (b *Branch) where(rel string) string { return b.opts.Branch + ":" + rel }

// runFiles returns the run's own entries after this save, from those at
// the head (own, whose checkpoint is prev) and the save's files. Chunks and
// summaries beyond cp, left by a later checkpoint than the one saved from,
// are dropped, as is the log beyond cp.LogBytes.
func (b *Branch) runFiles(own []object.TreeEntry, prev, cp *Checkpoint, f saveFiles) ([]object.TreeEntry, error) {
	next := []object.TreeEntry{
		{Name: checkpointFile, Mode: filemode.Regular, Hash: f.checkpoint},
		{Name: reviewsFile, Mode: filemode.Regular, Hash: f.reviews},
		{Name: workspaceDir, Mode: filemode.Dir, Hash: f.workspace},
	}
	for _, d := range b.runDirs(prev, cp, f) {
		h := plumbing.ZeroHash
		if i := slices.IndexFunc(own, func(e object.TreeEntry) bool { return e.Name == d.name }); i >= 0 {
			h = own[i].Hash
		}
		e, err := b.subtree(h, d.name, d.changed, d.edit)
		if err != nil {
			return nil, err
		}
		if !e.Hash.IsZero() {
			next = append(next, e)
		}
	}
	return next, nil
}

// dirEdit is what a save does to one of a run's directories.
type dirEdit struct {
	name    string
	changed bool
	edit    func([]object.TreeEntry) ([]object.TreeEntry, error)
}

// runDirs says what a save from cp, with files f, does to the run's
// ledger, summaries and log, whose checkpoint at the head is prev.
func (b *Branch) runDirs(prev, cp *Checkpoint, f saveFiles) []dirEdit {
	return []dirEdit{
		{ledgerDir, !f.ledger.IsZero() || prev.LedgerChunks > cp.LedgerChunks, func(es []object.TreeEntry) ([]object.TreeEntry, error) {
			if prev.LedgerChunks > cp.LedgerChunks {
				es = dropIndexed(es, ".jsonl", cp.LedgerChunks)
			}
			return upsert(es, chunkName(cp.LedgerChunks), f.ledger), nil
		}},
		{summariesDir, !f.summary.IsZero() || prev.Iteration > cp.Iteration, func(es []object.TreeEntry) ([]object.TreeEntry, error) {
			if prev.Iteration > cp.Iteration {
				es = dropIndexed(es, ".md", cp.Iteration+1)
			}
			return upsert(es, summaryName(cp.Iteration), f.summary), nil
		}},
		{logDir, !f.log.IsZero() || prev.LogBytes != cp.LogBytes, func(es []object.TreeEntry) ([]object.TreeEntry, error) {
			return b.logChunks(es, prev.LogBytes, cp.LogBytes, f.log)
		}},
	}
}

// subtree returns the entry of the run's directory name, tree h at the
// head (zero when absent), after edit if changed; a zero hash when it ends
// up empty.
func (b *Branch) subtree(h plumbing.Hash, name string, changed bool, edit func([]object.TreeEntry) ([]object.TreeEntry, error)) (object.TreeEntry, error) {
	e := object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	if !changed {
		return e, nil
	}
	es, err := b.objs.tree(h)
	if err != nil {
		return e, err
	}
	if es, err = edit(slices.Clone(es)); err != nil || len(es) == 0 {
		e.Hash = plumbing.ZeroHash
		return e, err
	}
	e.Hash, err = b.objs.putTree(es)
	return e, err
}

// upsert sets the blob of name in es; a zero h leaves es alone.
func upsert(es []object.TreeEntry, name string, h plumbing.Hash) []object.TreeEntry {
	if h.IsZero() {
		return es
	}
	e := object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
	if i := slices.IndexFunc(es, func(x object.TreeEntry) bool { return x.Name == name }); i >= 0 {
		es[i] = e
		return es
	}
	return append(es, e)
}

// chunkIndex parses a chunk's name: "0012.jsonl" is 12.
func chunkIndex(name, ext string) (int, bool) {
	digits, ok := strings.CutSuffix(name, ext)
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// dropIndexed removes the chunks numbered from and above.
func dropIndexed(es []object.TreeEntry, ext string, from int) []object.TreeEntry {
	return slices.DeleteFunc(es, func(e object.TreeEntry) bool {
		n, ok := chunkIndex(e.Name, ext)
		return ok && n >= from
	})
}

// logChunks returns the run's log chunks holding the first at bytes of a
// log whose chunks es hold committed bytes, followed by the chunk h (if
// not zero). Going back drops or cuts the last chunks; it reads their
// sizes, and the content of a chunk it cuts.
func (b *Branch) logChunks(es []object.TreeEntry, committed, at int64, h plumbing.Hash) ([]object.TreeEntry, error) {
	if at > committed {
		return nil, fmt.Errorf("the log has %d bytes but the checkpoint covers %d", committed, at)
	}
	byIndex := make([]object.TreeEntry, len(es))
	for _, e := range es {
		n, ok := chunkIndex(e.Name, ".log")
		if !ok || n >= len(es) || byIndex[n].Name != "" {
			return nil, fmt.Errorf("the log's chunks are not numbered 0 to %d: %q", len(es)-1, e.Name)
		}
		byIndex[n] = e
	}
	for total := committed; total > at; {
		if len(byIndex) == 0 {
			return nil, fmt.Errorf("the log's chunks hold fewer than the %d bytes committed", committed)
		}
		last := byIndex[len(byIndex)-1]
		size, err := b.store.EncodedObjectSize(last.Hash)
		if err != nil {
			return nil, err
		}
		byIndex = byIndex[:len(byIndex)-1]
		if total -= size; total >= at {
			continue
		}
		data, err := b.objs.blob(last.Hash) // the checkpoint ends inside this chunk
		if err != nil {
			return nil, err
		}
		if last.Hash, err = b.objs.putBlob(data[:at-total]); err != nil {
			return nil, err
		}
		byIndex, total = append(byIndex, last), at
	}
	if !h.IsZero() {
		byIndex = append(byIndex, object.TreeEntry{Name: logChunkName(len(byIndex)), Mode: filemode.Regular, Hash: h})
	}
	return byIndex, nil
}
