package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// RunInfo is one line of a listing of runs.
type RunInfo struct {
	ID        string    `json:"id"`
	Status    Status    `json:"status"`
	Iteration int       `json:"iteration"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Runs lists every run with a checkpoint, the most recently updated first
// (ties by id). A checkpoint that cannot be loaded is an error.
func (d *Dir) Runs(ctx context.Context) ([]RunInfo, error) {
	ids, err := d.runIDs()
	if err != nil {
		return nil, fmt.Errorf("list runs in %q: %w", d.path, err)
	}
	runs := make([]RunInfo, 0, len(ids))
	for _, id := range ids {
		cp, err := d.load(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("list runs in %q: run %q: %w", d.path, id, err)
		}
		runs = append(runs, RunInfo{ID: id, Status: cp.Status, Iteration: cp.Iteration, UpdatedAt: cp.UpdatedAt})
	}
	sortRuns(runs)
	return runs, nil
}

// runIDs finds every runs/<run-id>/checkpoint.json. It does not descend into
// a run's ledger or summaries, whose names no run id segment may take, so
// listing costs the number of runs, not their length.
func (d *Dir) runIDs() ([]string, error) {
	var ids []string
	err := fs.WalkDir(d.root.FS(), runsDir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil && p == runsDir && errors.Is(err, fs.ErrNotExist):
			return fs.SkipAll
		case err != nil:
			return err
		case e.IsDir() && (e.Name() == ledgerDir || e.Name() == summariesDir):
			return fs.SkipDir
		case !e.IsDir() && e.Name() == checkpointFile:
			id, ok := strings.CutPrefix(path.Dir(p), runsDir+"/")
			if ok && ValidRunID(id) == nil {
				ids = append(ids, id)
			}
		}
		return nil
	})
	return ids, err
}

// Latest returns the id of the most recently updated run, or an error
// wrapping ErrNotFound when the store has none.
func (d *Dir) Latest(ctx context.Context) (string, error) {
	runs, err := d.Runs(ctx)
	return latest(runs, err, fmt.Sprintf("in %q", d.path))
}

// Ledger returns the committed ledger of a run: chunks 0 to
// cp.LedgerChunks-1, concatenated. Chunks beyond those, left by an
// interrupted save, are never read.
func (d *Dir) Ledger(ctx context.Context, runID string) ([]byte, error) {
	cp, err := d.load(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("read ledger %q: %w", runID, err)
	}
	var out []byte
	for i := range cp.LedgerChunks {
		rel := filepath.Join(runDir(runID), ledgerDir, chunkName(i))
		chunk, err := d.readFile(rel)
		if err != nil {
			return nil, fmt.Errorf("read ledger %q: committed chunk %s: %w", runID, d.abs(rel), err)
		}
		out = append(out, chunk...)
	}
	return out, nil
}

// Log returns the committed run log: its first cp.LogBytes bytes.
func (d *Dir) Log(ctx context.Context, runID string) ([]byte, error) {
	cp, err := d.load(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("read log %q: %w", runID, err)
	}
	if cp.LogBytes == 0 {
		return []byte{}, nil
	}
	rel := filepath.Join(runDir(runID), logFile)
	f, _, err := workspace.OpenFile(d.root, rel)
	if err != nil {
		return nil, fmt.Errorf("read log %q: %w", runID, err)
	}
	defer f.Close()
	buf := make([]byte, cp.LogBytes)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("read log %q: %s is shorter than the %d bytes committed: %w", runID, d.abs(rel), cp.LogBytes, err)
	}
	return buf, nil
}

// Summary returns the summary of one iteration, or an error wrapping
// ErrNotFound when the run has none for it. Iterations after the
// checkpoint's are never read: their summaries are not committed.
func (d *Dir) Summary(ctx context.Context, runID string, iteration int) (string, error) {
	cp, err := d.load(ctx, runID)
	if err != nil {
		return "", fmt.Errorf("read summary %q iteration %d: %w", runID, iteration, err)
	}
	if err := uncommitted(cp, iteration); err != nil {
		return "", fmt.Errorf("read summary %q iteration %d: %w", runID, iteration, err)
	}
	rel := filepath.Join(runDir(runID), summariesDir, summaryName(iteration))
	data, err := d.readFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		err = notFound("the run has no summary for it")
	}
	if err != nil {
		return "", fmt.Errorf("read summary %q iteration %d: %w", runID, iteration, err)
	}
	return string(data), nil
}

// notFound is an error that says what is missing and matches ErrNotFound.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNotFound }

// maxStoreFile bounds one file of the dir: store read back. It is far above
// anything the store writes (ledger chunks and checkpoints are small); the
// bound is there because .loop/state lies in the loop root, within agents'
// reach.
const maxStoreFile = 256 << 20

// readFile reads the store-relative file rel. The store's directory lies in
// the loop root, where an agent can replace a file with a FIFO, whose
// open(2) would wait for a writer forever: only a regular file is read,
// up to maxStoreFile bytes.
func (d *Dir) readFile(rel string) ([]byte, error) {
	return workspace.ReadFile(d.root, rel, maxStoreFile)
}
