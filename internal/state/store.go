package state

import (
	"cmp"
	"context"
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
	// Path is where the store keeps its files on this machine.
	Path() string
	// Close releases the store.
	Close() error
}

var (
	_ Store = (*Dir)(nil)
	_ Store = (*Branch)(nil)
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

// latest is the first of runs, a store's listing (where names it), or
// an error wrapping ErrNotFound when there is none.
func latest(runs []RunInfo, err error, where string) (string, error) {
	switch {
	case err != nil:
		return "", err
	case len(runs) == 0:
		return "", fmt.Errorf("latest run %s: %w", where, ErrNotFound)
	}
	return runs[0].ID, nil
}

// advance is cp as a save of c commits it at now: the ledger and log
// counts, the format version and the time.
func advance(cp *Checkpoint, c Commit, now time.Time) Checkpoint {
	next := *cp
	if len(c.Ledger) > 0 {
		next.LedgerChunks++
		next.LedgerEvents += c.Events
	}
	next.LogBytes += int64(len(c.Log))
	next.Version = Version
	next.UpdatedAt = now.UTC().Round(0)
	return next
}

// uncommitted refuses to read the summary of an iteration the checkpoint
// cp does not cover.
func uncommitted(cp *Checkpoint, iteration int) error {
	if iteration < 0 || iteration > cp.Iteration {
		return notFound(fmt.Sprintf("not committed: the checkpoint is at iteration %d", cp.Iteration))
	}
	return nil
}

// sortRuns orders runs as List returns them: the most recently updated
// first, then by id.
func sortRuns(runs []RunInfo) {
	slices.SortFunc(runs, func(a, b RunInfo) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
