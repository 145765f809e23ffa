package state

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// On the branch, a run's recordings are runs/<id>/recording/…/NNNN.json,
// fanned out as summaries are, and runs/<id>/snapshots/NNNN names the
// workspace tree the save of iteration NNNN stored, which keeps it
// reachable from the branch's tip (the cache is fetched at depth 1). A
// save from an earlier iteration than the head's (a new generation)
// drops both beyond it.
const snapshotsDir = "snapshots"

var recordingFiles = indexed{recordingName, ".json"}

// recordingBlob is the recording a save stores, or nil.
func recordingBlob(c Commit) ([]byte, error) {
	if c.Recording == nil {
		return nil, nil
	}
	data, err := json.MarshalIndent(c.Recording, "", "  ")
	return append(data, '\n'), err
}

// recordingEdit is what a save does to the run's recording directory.
func (r runBuilder) recordingEdit(prev, cp *Checkpoint, f saveFiles) dirEdit {
	drop := prev.Iteration > cp.Iteration
	return dirEdit{recordingDir, recordingFiles, !f.recording.IsZero() || drop, func(h plumbing.Hash) (plumbing.Hash, error) {
		return r.dropAndPut(h, recordingFiles, drop, cp.Iteration+1, cp.Iteration, f.recording)
	}}
}

// snapshots returns the run's snapshots entry after a save (none when
// empty): the head's, less the iterations beyond cp's, with cp's set to
// the save's workspace when the save records.
func (r runBuilder) snapshots(own []object.TreeEntry, cp *Checkpoint, f saveFiles) ([]object.TreeEntry, error) {
	var es []object.TreeEntry
	if i := slices.IndexFunc(own, func(e object.TreeEntry) bool { return e.Name == snapshotsDir }); i >= 0 {
		held, err := r.o.tree(own[i].Hash)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", snapshotsDir, err)
		}
		for _, e := range held {
			if n, ok := chunkIndex(e.Name, ""); ok && n <= cp.Iteration && e.Name != snapshotName(cp.Iteration) {
				es = append(es, e)
			}
		}
	}
	if !f.recording.IsZero() && !f.workspace.IsZero() {
		es = append(es, object.TreeEntry{Name: snapshotName(cp.Iteration), Mode: filemode.Dir, Hash: f.workspace})
	}
	if len(es) == 0 {
		return nil, nil
	}
	h, err := r.o.putTree(es)
	if err != nil {
		return nil, err
	}
	return []object.TreeEntry{{Name: snapshotsDir, Mode: filemode.Dir, Hash: h}}, nil
}

func snapshotName(i int) string { return fmt.Sprintf("%04d", i) }

// Recordings returns the committed recordings of a run at the head last
// seen (fetched if none was), by iteration, with each snapshot the one its
// save stored, and the local state repository holding their objects,
// which is only read through it, until Close.
func (b *Branch) Recordings(ctx context.Context, runID string) ([]Recording, storer.EncodedObjectStorer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	recs, err := b.recordings(ctx, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("read recordings %q: %w", runID, err)
	}
	return recs, b.cache.store, nil
}

func (b *Branch) recordings(ctx context.Context, runID string) ([]Recording, error) {
	cp, err := b.load(ctx, runID)
	if err != nil {
		return nil, err
	}
	at := runPath(runID)
	dir, ok, err := b.objs.lookup(b.tree, append(at, recordingDir))
	if err != nil || !ok {
		return nil, notFoundOr(err, "the run has no recording")
	}
	snaps, _, err := b.objs.lookup(b.tree, append(at, snapshotsDir))
	if err != nil {
		return nil, err
	}
	held, err := b.objs.tree(snaps.Hash)
	if err != nil {
		return nil, err
	}
	var out []Recording
	for i := 0; i <= cp.Iteration; i++ {
		data, ok, err := b.objs.fanData(dir.Hash, recordingFiles, i)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		var rec Recording
		if err := json.Unmarshal(data, &rec); err != nil || rec.Iteration != i {
			return nil, fmt.Errorf("%s is corrupt", b.where(path.Join(append(at, recordingDir, recordingName(i))...)))
		}
		if k := slices.IndexFunc(held, func(e object.TreeEntry) bool { return e.Name == snapshotName(i) }); k >= 0 {
			rec.Snapshot = held[k].Hash.String()
		}
		out = append(out, rec)
	}
	if len(out) == 0 {
		return nil, notFound("the run has no recording")
	}
	return out, nil
}

func notFoundOr(err error, why string) error {
	if err != nil {
		return err
	}
	return notFound(why)
}
