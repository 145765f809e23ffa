package state

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Store is what both stores offer: [*Dir] (dir:PATH) and [*Branch]
// (branch:NAME). [OpenStore] opens either from a --state value.
type Store interface {
	// Load returns the run's last committed checkpoint, or an error
	// wrapping ErrNotFound.
	Load(ctx context.Context, runID string) (*Checkpoint, error)
	// Save commits one checkpoint atomically and updates cp's counters;
	// on error cp is unchanged.
	Save(ctx context.Context, cp *Checkpoint, c Commit) error
	// Lock holds the run for this process, or fails with ErrLocked.
	Lock(runID string) (unlock func() error, err error)
	// Runs lists the runs, most recently updated first.
	Runs(ctx context.Context) ([]RunInfo, error)
	// Latest returns the most recently updated run, or ErrNotFound.
	Latest(ctx context.Context) (string, error)
	// Ledger returns a run's committed ledger.
	Ledger(ctx context.Context, runID string) ([]byte, error)
	// Log returns a run's committed run log.
	Log(ctx context.Context, runID string) ([]byte, error)
	// Summary returns the summary of one committed iteration.
	Summary(ctx context.Context, runID string, iteration int) (string, error)
	// Memory lists the memory entries of every run, the latest first.
	Memory(ctx context.Context) ([]Memory, error)
	// Path is where the store keeps its files on this machine.
	Path() string
	// Close releases the store.
	Close() error
}

var (
	_ Store   = (*Dir)(nil)
	_ Store   = (*Branch)(nil)
	_ backend = (*Dir)(nil)
	_ backend = (*Branch)(nil)
)

// DefaultBranch is the state branch the action uses when none is given.
const DefaultBranch = "loop-state"

// RemoteOptions say where a branch: store's remote is.
type RemoteOptions struct {
	// Remote is a URL (https://host/owner/repo.git, file:///path), an
	// absolute path, or the name of a remote of the git repository that
	// holds the loop root; "" is "origin".
	Remote string
	// Token authenticates to an http(s) remote as x-access-token. It never
	// appears in an error or a log.
	Token string
	// Checkout is how the workspace is read into each checkpoint: the
	// loop root's git settings and the largest file a snapshot holds (see
	// BranchOptions.Checkout).
	Checkout workspace.Checkout
}

// OpenStore parses a --state value and opens the store it names:
// "dir:PATH" (see [Open]) or "branch:NAME", the git branch NAME of the
// remote opts names, cached under root's .loop/state-git and snapshotting
// root's workspace into each checkpoint (see [OpenBranch]).
func OpenStore(ctx context.Context, spec, root string, opts RemoteOptions) (Store, error) {
	scheme, name, ok := strings.Cut(spec, ":")
	switch {
	case spec == "":
		return nil, errors.New("state store: empty --state; want dir:PATH or branch:NAME")
	case !ok:
		return nil, fmt.Errorf("state store %q: want dir:PATH or branch:NAME", spec)
	case scheme == "dir":
		d, err := Open(spec, root)
		if err != nil {
			return nil, err // not a nil *Dir in a non-nil Store
		}
		return d, nil
	case scheme != "branch":
		return nil, fmt.Errorf("state store %q: unknown kind %q; want dir:PATH or branch:NAME", spec, scheme)
	case name == "":
		return nil, fmt.Errorf("state store %q: branch: needs a branch name; want branch:NAME", spec)
	}
	b, err := OpenBranch(ctx, BranchOptions{Root: root, Branch: name, Remote: opts.Remote, Token: opts.Token, Checkout: opts.Checkout})
	if err != nil {
		return nil, fmt.Errorf("state store %q: %w", spec, err)
	}
	return b, nil
}

// backend is what one kind of store reads; the readers both stores offer
// are written once over it (see reads).
type backend interface {
	hold() (release func()) // serialises a read with the store's other operations
	place() string          // the store, for messages: `in "/path"`, `on branch "x"`
	load(ctx context.Context, runID string) (*Checkpoint, error)
	runIDs(ctx context.Context) ([]string, error)
	// ledger and log read what the run's checkpoint cp counts; summary reads
	// one iteration's, not ok when the run has none.
	ledger(runID string, cp *Checkpoint) ([]byte, error)
	log(runID string, cp *Checkpoint) ([]byte, error)
	summary(runID string, iteration int) (data []byte, ok bool, err error)
	memories(runID string) ([]storedMemory, error) // the files of the run's memory directory
}

// reads are the readers of [Store] both stores share. Nothing beyond what
// the checkpoint counts is ever read, so what an interrupted save left is
// invisible.
type reads struct{ b backend }

// Runs lists every run with a checkpoint, the most recently updated first
// (ties by id). A checkpoint that cannot be loaded is an error.
func (r reads) Runs(ctx context.Context) ([]RunInfo, error) {
	defer r.b.hold()()
	ids, err := r.b.runIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs %s: %w", r.b.place(), err)
	}
	runs := make([]RunInfo, 0, len(ids))
	for _, id := range ids {
		cp, err := r.b.load(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("list runs %s: run %q: %w", r.b.place(), id, err)
		}
		runs = append(runs, RunInfo{ID: id, Status: cp.Status, Iteration: cp.Iteration, UpdatedAt: cp.UpdatedAt})
	}
	slices.SortFunc(runs, func(a, b RunInfo) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return runs, nil
}

// Latest returns the id of the most recently updated run, or an error
// wrapping ErrNotFound when the store has none.
func (r reads) Latest(ctx context.Context) (string, error) {
	runs, err := r.Runs(ctx)
	switch {
	case err != nil:
		return "", err
	case len(runs) == 0:
		return "", fmt.Errorf("latest run %s: %w", r.b.place(), ErrNotFound)
	}
	return runs[0].ID, nil
}

// Ledger returns the run's committed ledger: chunks 0 to
// cp.LedgerChunks-1, concatenated.
func (r reads) Ledger(ctx context.Context, runID string) ([]byte, error) {
	return r.committed(ctx, "ledger", runID, r.b.ledger)
}

// Log returns the run's committed log: its first cp.LogBytes bytes.
func (r reads) Log(ctx context.Context, runID string) ([]byte, error) {
	return r.committed(ctx, "log", runID, r.b.log)
}

func (r reads) committed(ctx context.Context, what, runID string, read func(string, *Checkpoint) ([]byte, error)) ([]byte, error) {
	defer r.b.hold()()
	cp, err := r.b.load(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", what, runID, err)
	}
	out, err := read(runID, cp)
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", what, runID, err)
	}
	return out, nil
}

// Summary returns the summary of one iteration, or an error wrapping
// ErrNotFound when the run has none for it. Iterations after the
// checkpoint's are never read: their summaries are not committed.
func (r reads) Summary(ctx context.Context, runID string, iteration int) (string, error) {
	defer r.b.hold()()
	data, err := r.readSummary(ctx, runID, iteration)
	if err != nil {
		return "", fmt.Errorf("read summary %q iteration %d: %w", runID, iteration, err)
	}
	return string(data), nil
}

func (r reads) readSummary(ctx context.Context, runID string, iteration int) ([]byte, error) {
	cp, err := r.b.load(ctx, runID)
	if err != nil {
		return nil, err
	}
	if iteration < 0 || iteration > cp.Iteration {
		return nil, notFound(fmt.Sprintf("not committed: the checkpoint is at iteration %d", cp.Iteration))
	}
	data, ok, err := r.b.summary(runID, iteration)
	if err == nil && !ok {
		err = notFound("the run has no summary for it")
	}
	return data, err
}

// encode returns cp as a save of c commits it at now (the ledger and log
// counts, the format version and the time), and the checkpoint.json and
// reviews.json that save writes.
func encode(cp *Checkpoint, c Commit, now time.Time) (next Checkpoint, checkpoint, reviews []byte, err error) {
	next = *cp
	if len(c.Ledger) > 0 {
		next.LedgerChunks++
		next.LedgerEvents += c.Events
	}
	next.LogBytes += int64(len(c.Log))
	next.Version = Version
	next.UpdatedAt = now.UTC().Round(0)
	if checkpoint, err = json.MarshalIndent(next, "", "  "); err != nil {
		return next, nil, nil, err
	}
	reviews = []byte("[]")
	if cp.Decisions != nil {
		if reviews, err = json.MarshalIndent(cp.Decisions, "", "  "); err != nil {
			return next, nil, nil, err
		}
	}
	return next, append(checkpoint, '\n'), append(reviews, '\n'), nil
}
