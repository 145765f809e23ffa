package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Dir keeps runs under a directory (the default is .loop/state in the loop
// root):
//
//	runs/<run-id>/checkpoint.json   the commit point
//	runs/<run-id>/ledger/NNNN.jsonl one chunk per save (NNNN = 0000, 0001, …; 4 digits minimum)
//	runs/<run-id>/summaries/NNNN.md the summary of iteration NNNN
//	runs/<run-id>/reviews.json      the checkpoint's Decisions, as a JSON array (a view for people and tools)
//	runs/<run-id>/run.log           the human-readable log
//	runs/<run-id>/memory/<gen>.json the memory entry of each generation that ended (Memory)
//	runs/<run-id>/.lock             flocked by the process that holds the run
//
// checkpoint.json is the only commit point: the ledger, the log and the
// summaries are read only up to the counts it records, so anything an
// interrupted save left behind is invisible and overwritten by the next
// save. Every file is reached through an [os.Root], so nothing is read or
// written outside the directory, not even through a symbolic link.
//
// A Dir is safe for concurrent use. Saves of one run are serialised within a
// Dir; across processes (or Dir values) hold the run with [Dir.Lock].
type Dir struct {
	reads
	path string // absolute, for messages
	root *os.Root
	now  func() time.Time

	mu   sync.Mutex
	runs map[string]*sync.Mutex // per run id, held by Save
}

// Names of a run's files, relative to its directory.
const (
	checkpointFile = "checkpoint.json"
	ledgerDir      = "ledger"
	summariesDir   = "summaries"
	reviewsFile    = "reviews.json"
	logFile        = "run.log"
	lockFile       = ".lock"
	runsDir        = "runs"
)

// OpenDir opens the store at path, creating the directory if it is missing.
// Close releases it.
func OpenDir(path string) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open state directory %q: %w", path, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("open state directory %q: %w", path, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open state directory %q: %w", path, err)
	}
	d := &Dir{path: abs, root: root, now: time.Now, runs: map[string]*sync.Mutex{}}
	d.reads = reads{d}
	return d, nil
}

// Path is the store's directory, absolute.
func (d *Dir) Path() string { return d.path }

// Close releases the directory. Locks taken with Lock stay held until
// their unlock functions are called.
func (d *Dir) Close() error { return d.root.Close() }

// runDir is a run's directory relative to the store; id must be valid.
func runDir(id string) string { return filepath.Join(runsDir, filepath.FromSlash(id)) }

func chunkName(i int) string   { return fmt.Sprintf("%04d.jsonl", i) }
func summaryName(i int) string { return fmt.Sprintf("%04d.md", i) }

// abs names a store-relative file for people.
func (d *Dir) abs(rel string) string { return filepath.Join(d.path, rel) }

// runMutex returns the mutex that serialises saves of one run in this Dir.
func (d *Dir) runMutex(id string) *sync.Mutex {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, ok := d.runs[id]
	if !ok {
		m = new(sync.Mutex)
		d.runs[id] = m
	}
	return m
}

// Load returns the run's last committed checkpoint, or an error wrapping
// ErrNotFound when the run has none.
func (d *Dir) Load(ctx context.Context, runID string) (*Checkpoint, error) {
	cp, err := d.load(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", runID, err)
	}
	return cp, nil
}

// load reads and validates checkpoint.json. It is the only reader of the
// commit point; every other reader goes through it.
func (d *Dir) load(ctx context.Context, runID string) (*Checkpoint, error) {
	if err := ValidRunID(runID); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return d.loadFile(runID)
}

// loadFile reads and validates the run's checkpoint.json.
func (d *Dir) loadFile(runID string) (*Checkpoint, error) {
	rel := filepath.Join(runDir(runID), checkpointFile)
	data, err := d.readFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var cp Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", d.abs(rel), err)
	}
	if err := checkLoaded(&cp, runID); err != nil {
		return nil, fmt.Errorf("%s: %w", d.abs(rel), err)
	}
	return &cp, nil
}

func checkLoaded(cp *Checkpoint, runID string) error {
	switch {
	case cp.Version != Version:
		return fmt.Errorf("checkpoint format version %d; this build reads version %d", cp.Version, Version)
	case cp.RunID != runID:
		return fmt.Errorf("checkpoint belongs to run %q", cp.RunID)
	case cp.LedgerChunks < 0 || cp.LedgerEvents < 0 || cp.LogBytes < 0:
		return fmt.Errorf("checkpoint is corrupt: negative ledger or log counts (%d chunks, %d events, %d log bytes)",
			cp.LedgerChunks, cp.LedgerEvents, cp.LogBytes)
	}
	return nil
}

// Lock holds the run for this process: it takes an exclusive lock on
// runs/<run-id>/.lock without waiting, and returns an error wrapping
// ErrLocked when someone else holds it. The lock is released by unlock or
// by the death of the process, however it dies; calling unlock again does
// nothing more. Each Lock opens the file anew, so a second Lock of the same
// run fails even within one process.
func (d *Dir) Lock(runID string) (unlock func() error, err error) {
	if err := ValidRunID(runID); err != nil {
		return nil, fmt.Errorf("lock run %q: %w", runID, err)
	}
	run := runDir(runID)
	if err := d.mkdirs(run); err != nil {
		return nil, fmt.Errorf("lock run %q: %w", runID, err)
	}
	release, err := d.lockFile(filepath.Join(run, lockFile))
	if err != nil {
		return nil, fmt.Errorf("lock run %q: %w", runID, err)
	}
	var once sync.Once
	var uerr error
	return func() error {
		once.Do(func() {
			if err := release(); err != nil {
				uerr = fmt.Errorf("unlock run %q: %w", runID, err)
			}
		})
		return uerr
	}, nil
}
