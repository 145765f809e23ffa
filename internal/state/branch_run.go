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
// Only the trees on the run's path and those on the paths of the files
// added to (or dropped from) its ledger, summaries and log are read and
// rewritten.
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
	next, err := runBuilder{b.objs}.files(own, &prev, cp, f)
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

// runBuilder makes a run's own entries for a save: its checkpoint,
// reviews and workspace, and its ledger, summaries and log directories
// edited in the fanned layout.
type runBuilder struct{ o *objects }

// files returns the run's own entries after this save, from those at
// the head (own, whose checkpoint is prev) and the save's files. Chunks and
// summaries beyond cp, left by a later checkpoint than the one saved from,
// are dropped, as is the log beyond cp.LogBytes.
func (r runBuilder) files(own []object.TreeEntry, prev, cp *Checkpoint, f saveFiles) ([]object.TreeEntry, error) {
	next := []object.TreeEntry{
		{Name: checkpointFile, Mode: filemode.Regular, Hash: f.checkpoint},
		{Name: reviewsFile, Mode: filemode.Regular, Hash: f.reviews},
	}
	if !f.workspace.IsZero() { // none: an interrupted save with none to keep (Commit.Interrupted)
		next = append(next, object.TreeEntry{Name: workspaceDir, Mode: filemode.Dir, Hash: f.workspace})
	}
	snaps, err := r.snapshots(own, cp, f)
	if err != nil {
		return nil, err
	}
	next = append(next, snaps...)
	for _, d := range append(r.dirs(prev, cp, f), r.recordingEdit(prev, cp, f)) {
		h := plumbing.ZeroHash
		if i := slices.IndexFunc(own, func(e object.TreeEntry) bool { return e.Name == d.name }); i >= 0 {
			h = own[i].Hash
		}
		if d.changed {
			var err error
			if h, err = r.o.fanMigrate(h, d.files); err == nil {
				h, err = d.edit(h)
			}
			if err == nil && !h.IsZero() {
				h, err = r.o.fanPack(h, d.files)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.name, err)
			}
		}
		if !h.IsZero() {
			next = append(next, object.TreeEntry{Name: d.name, Mode: filemode.Dir, Hash: h})
		}
	}
	h, err := r.memory(own, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", memoryDir, err)
	}
	if !h.IsZero() {
		next = append(next, object.TreeEntry{Name: memoryDir, Mode: filemode.Dir, Hash: h})
	}
	return next, nil
}

// memory returns the run's memory tree after the save: the one at the
// head (in own), with the save's entry put and the entries it forgets and
// those past MaxMemoryPerRun dropped; zero when none is left.
func (r runBuilder) memory(own []object.TreeEntry, f saveFiles) (plumbing.Hash, error) {
	h := plumbing.ZeroHash
	if i := slices.IndexFunc(own, func(e object.TreeEntry) bool { return e.Name == memoryDir }); i >= 0 {
		h = own[i].Hash
	}
	if f.memory.IsZero() && len(f.forget) == 0 {
		return h, nil
	}
	es, err := r.o.tree(h)
	if err != nil {
		return h, err
	}
	var have []string
	for _, e := range es {
		have = append(have, e.Name)
	}
	keep, _ := memoryNames(have, f.memoryName, f.forget)
	var next []object.TreeEntry
	for _, name := range keep {
		switch i := slices.IndexFunc(es, func(e object.TreeEntry) bool { return e.Name == name }); {
		case name == f.memoryName:
			next = append(next, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: f.memory})
		case i >= 0:
			next = append(next, es[i])
		}
	}
	if len(next) == 0 {
		return plumbing.ZeroHash, nil
	}
	return r.o.putTree(next)
}

// dirEdit is what a save does to one of a run's directories: edit makes
// the new tree from the one at the head (in the fanned layout; zero when
// absent), and returns zero when nothing is left.
type dirEdit struct {
	name    string
	files   indexed
	changed bool
	edit    func(plumbing.Hash) (plumbing.Hash, error)
}

// dirs says what a save from cp, with files f, does to the run's
// ledger, summaries and log, whose checkpoint at the head is prev.
func (r runBuilder) dirs(prev, cp *Checkpoint, f saveFiles) []dirEdit {
	return []dirEdit{
		{ledgerDir, ledgerFiles, !f.ledger.IsZero() || prev.LedgerChunks > cp.LedgerChunks, func(h plumbing.Hash) (plumbing.Hash, error) {
			return r.dropAndPut(h, ledgerFiles, prev.LedgerChunks > cp.LedgerChunks, cp.LedgerChunks, cp.LedgerChunks, f.ledger)
		}},
		{summariesDir, summaryFiles, !f.summary.IsZero() || prev.Iteration > cp.Iteration, func(h plumbing.Hash) (plumbing.Hash, error) {
			return r.dropAndPut(h, summaryFiles, prev.Iteration > cp.Iteration, cp.Iteration+1, cp.Iteration, f.summary)
		}},
		{logDir, logFiles, !f.log.IsZero() || prev.LogBytes != cp.LogBytes, func(h plumbing.Hash) (plumbing.Hash, error) {
			return r.logChunks(h, prev.LogBytes, cp.LogBytes, f.log)
		}},
	}
}

// dropAndPut drops the files of d numbered from and above when drop is
// set, then sets the file numbered at to blob unless it is zero.
func (r runBuilder) dropAndPut(h plumbing.Hash, d indexed, drop bool, from, at int, blob plumbing.Hash) (plumbing.Hash, error) {
	var err error
	if drop {
		if h, err = r.o.fanDrop(h, d, from); err != nil {
			return h, err
		}
	}
	if blob.IsZero() {
		return h, nil
	}
	return r.o.fanPut(h, d, at, blob)
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

// logChunks returns the fanned log tree h, whose chunks hold committed
// bytes, holding the first at bytes of the log followed by the chunk blob
// (if not zero).
func (r runBuilder) logChunks(h plumbing.Hash, committed, at int64, blob plumbing.Hash) (plumbing.Hash, error) {
	if at > committed {
		return h, fmt.Errorf("the log has %d bytes but the checkpoint covers %d", committed, at)
	}
	h, err := r.logBack(h, committed, at)
	if err != nil || blob.IsZero() {
		return h, err
	}
	last, ok, err := r.o.fanLast(h, logFiles)
	if err != nil {
		return h, err
	}
	next := 0
	if ok {
		next = last + 1
	}
	return r.o.fanPut(h, logFiles, next, blob)
}

// logBack drops or cuts the last chunks of the log tree h, which hold
// total bytes, until they hold at. It reads the chunks it drops or cuts
// (a consolidated bucket it ends inside is expanded back, see fanUnpack),
// and the trees on their paths.
func (r runBuilder) logBack(h plumbing.Hash, total, at int64) (plumbing.Hash, error) {
	committed := total
	for total > at {
		i, ok, err := r.o.fanLast(h, logFiles)
		if err != nil {
			return h, err
		}
		var data []byte
		if ok {
			data, ok, err = r.o.fanData(h, logFiles, i)
		}
		if err != nil {
			return h, err
		}
		if !ok {
			return h, fmt.Errorf("the log's chunks hold fewer than the %d bytes committed", committed)
		}
		if h, err = r.o.fanDrop(h, logFiles, i); err != nil {
			return h, err
		}
		if total -= int64(len(data)); total >= at {
			continue
		}
		// The checkpoint ends inside this chunk.
		cut, err := r.o.putBlob(data[:at-total])
		if err == nil {
			h, err = r.o.fanPut(h, logFiles, i, cut)
		}
		if err != nil {
			return h, err
		}
		total = at
	}
	return h, nil
}
