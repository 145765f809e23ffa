package state

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/workspace"
)

// refresh fetches the branch head, refusing a branch that is not a
// state branch (see checkStateTip). Callers hold b.mu.
func (b *Branch) refresh(ctx context.Context) error {
	// A collection of the cache (by this or another process) keeps only
	// its head: offer the remote only the commits still held.
	b.cache.haves = slices.DeleteFunc(b.cache.haves, func(h plumbing.Hash) bool { return b.cache.store.HasEncodedObject(h) != nil })
	head, err := b.remote.Fetch(ctx, b.cache.store, b.ref, b.cache.haves)
	if err != nil {
		return err
	}
	tree := plumbing.ZeroHash
	if !head.IsZero() {
		c, err := object.GetCommit(b.cache.store, head)
		if err != nil {
			return fmt.Errorf("head of %q: %w", b.opts.Branch, err)
		}
		if err := b.checkStateTip(c); err != nil {
			return err
		}
		tree = c.TreeHash
	}
	b.head, b.tree, b.fetched = head, tree, true
	b.cache.saw(head)
	return nil
}

// view fetches the branch head unless this Branch has seen it already.
// Callers hold b.mu.
func (b *Branch) view(ctx context.Context) error {
	if b.fetched && (b.head.IsZero() || b.cache.store.HasEncodedObject(b.head) == nil) {
		return nil
	}
	return b.refresh(ctx) // first use, or another process collected the cache
}

// Load fetches the branch and returns the run's checkpoint at its head, or
// an error wrapping ErrNotFound when the run has none.
func (b *Branch) Load(ctx context.Context, runID string) (*Checkpoint, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cp, err := b.loadFresh(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", runID, err)
	}
	return cp, nil
}

func (b *Branch) loadFresh(ctx context.Context, runID string) (*Checkpoint, error) {
	if err := ValidRunID(runID); err != nil {
		return nil, err
	}
	if err := b.refresh(ctx); err != nil {
		return nil, err
	}
	return b.load(ctx, runID)
}

// load reads and validates the run's checkpoint.json at the head last
// seen, fetching first if this Branch has seen none. Callers hold b.mu.
func (b *Branch) load(ctx context.Context, runID string) (*Checkpoint, error) {
	if err := ValidRunID(runID); err != nil {
		return nil, err
	}
	if err := b.view(ctx); err != nil {
		return nil, err
	}
	rel := path.Join(append(runPath(runID), checkpointFile)...)
	e, ok, err := b.objs.lookup(b.tree, append(runPath(runID), checkpointFile))
	if err != nil {
		return nil, err
	}
	if !ok || e.Mode == filemode.Dir {
		return nil, ErrNotFound
	}
	var cp Checkpoint
	if err := b.decode(e.Hash, rel, &cp); err != nil {
		return nil, err
	}
	if err := checkLoaded(&cp, runID); err != nil {
		return nil, fmt.Errorf("%s: %w", b.where(rel), err)
	}
	return &cp, nil
}

func (b *Branch) hold() func() {
	b.mu.Lock()
	return b.mu.Unlock
}

func (b *Branch) place() string { return fmt.Sprintf("on branch %q", b.opts.Branch) }

// runIDs lists the runs at the head last seen (fetched if none was).
func (b *Branch) runIDs(ctx context.Context) ([]string, error) {
	if err := b.view(ctx); err != nil {
		return nil, err
	}
	runsTree, err := b.objs.entries(b.tree, runsDir)
	if err != nil {
		return nil, err
	}
	var ids []string
	return ids, b.findRuns(runsTree, "", &ids)
}

// findRuns appends the ids of the runs in the tree es, found at run id
// prefix: directories holding a checkpoint.json. It does not descend into
// a run's own directories, so listing costs the number of runs.
func (b *Branch) findRuns(es []object.TreeEntry, prefix string, ids *[]string) error {
	for _, e := range es {
		switch {
		case e.Name == checkpointFile && e.Mode != filemode.Dir && prefix != "":
			if ValidRunID(prefix) == nil {
				*ids = append(*ids, prefix)
			}
		case e.Mode == filemode.Dir && !slices.Contains(ownNames, e.Name):
			sub, err := b.objs.tree(e.Hash)
			if err != nil {
				return err
			}
			if err := b.findRuns(sub, path.Join(prefix, e.Name), ids); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *Branch) ledger(runID string, cp *Checkpoint) ([]byte, error) {
	return b.chunks(runID, ledgerDir, ledgerFiles, cp.LedgerChunks, -1)
}

func (b *Branch) log(runID string, cp *Checkpoint) ([]byte, error) {
	return b.chunks(runID, logDir, logFiles, -1, cp.LogBytes)
}

// chunks concatenates the chunks of the run's directory dir, the files of
// files (in any layout, see fanAll) from 0: n of them, or (n -1) as many
// as hold size bytes, which must end on a chunk's end.
func (b *Branch) chunks(runID, dir string, files indexed, n int, size int64) ([]byte, error) {
	e, ok, err := b.objs.lookup(b.tree, append(runPath(runID), dir))
	if err != nil {
		return nil, err
	}
	byIndex := map[int][]byte{}
	if ok && e.Mode == filemode.Dir {
		if byIndex, err = b.objs.fanAll(e.Hash, files); err != nil {
			return nil, err
		}
	}
	out := []byte{}
	for i := 0; i < n || (n < 0 && int64(len(out)) < size); i++ {
		data, ok := byIndex[i]
		if !ok {
			return nil, fmt.Errorf("committed chunk %s is missing", b.where(path.Join(append(runPath(runID), dir, files.name(i))...)))
		}
		out = append(out, data...)
	}
	if n < 0 && int64(len(out)) != size {
		return nil, fmt.Errorf("the log's chunks hold %d bytes, the checkpoint %d", len(out), size)
	}
	return out, nil
}

// summary reads the summary of an iteration at the head last seen, in any
// layout (see fanData).
func (b *Branch) summary(runID string, iteration int) ([]byte, bool, error) {
	e, ok, err := b.objs.lookup(b.tree, append(runPath(runID), summariesDir))
	if err != nil || !ok || e.Mode != filemode.Dir {
		return nil, false, err
	}
	return b.objs.fanData(e.Hash, summaryFiles, iteration)
}

// Restore makes the loop root's content equal the run's checkpointed
// workspace at the head last seen (fetched if none was; Load fetches), as
// [workspace.Restore] does: it writes and deletes files but never touches
// .git, .loop or ignored files. It returns how many paths changed.
func (b *Branch) Restore(ctx context.Context, runID string) (files int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.restore(ctx, runID)
	if err != nil {
		return n, fmt.Errorf("restore workspace of run %q: %w", runID, err)
	}
	return n, nil
}

func (b *Branch) restore(ctx context.Context, runID string) (int, error) {
	ws, err := b.workspace(ctx, runID)
	if err != nil {
		return 0, err
	}
	return workspace.RestoreWith(ctx, b.opts.Root, b.cache.store, ws, b.opts.Checkout)
}

// Workspace returns the workspace the run's checkpoint stored, at the
// head last seen (fetched if none was; Load fetches), and the object
// store holding it: the local state repository, which is only read
// through it, until Close.
func (b *Branch) Workspace(ctx context.Context, runID string) (workspace.Snapshot, storer.EncodedObjectStorer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ws, err := b.workspace(ctx, runID)
	if err != nil {
		return "", nil, fmt.Errorf("read the workspace of run %q: %w", runID, err)
	}
	return ws, b.cache.store, nil
}

func (b *Branch) workspace(ctx context.Context, runID string) (workspace.Snapshot, error) {
	if _, err := b.load(ctx, runID); err != nil {
		return "", err
	}
	e, ok, err := b.objs.lookup(b.tree, append(runPath(runID), workspaceDir))
	if err != nil {
		return "", err
	}
	if !ok || e.Mode != filemode.Dir {
		return "", notFound("the checkpoint has no workspace")
	}
	return workspace.Snapshot(e.Hash.String()), nil
}

func (b *Branch) memories(runID string) ([]storedMemory, error) {
	es, err := b.objs.entries(b.tree, append(runPath(runID), memoryDir)...)
	if err != nil {
		return nil, err
	}
	var out []storedMemory
	for _, e := range es {
		if e.Mode != filemode.Regular {
			continue
		}
		data, err := b.objs.blob(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.where(path.Join(append(runPath(runID), memoryDir, e.Name)...)), err)
		}
		out = append(out, storedMemory{e.Name, data})
	}
	return out, nil
}
