package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/loop-action/loop-action/internal/backoff"
	"github.com/loop-action/loop-action/internal/workspace"
)

// BranchOptions configure a branch: store.
type BranchOptions struct {
	Root   string // the loop root: its workspace is snapshotted into each checkpoint and restored on resume
	Branch string // e.g. "loop-state"; see ErrRefusedBranch for the names refused
	// Remote is a URL (file:///path, https://host/owner/repo.git), an
	// absolute path, or the name of a remote of the git repository holding
	// Root ("" is "origin"), read from its configuration; a shallow clone
	// will do.
	Remote string
	Token  string // for http(s): basic auth as x-access-token; never logged, never in errors
	Author string // "name <email>"; "" is DefaultAuthor
	Cache  string // the local state repository (bare); "" is <Root>/.loop/state-git
	// Checkout is how a save snapshots Root into the checkpoint, and a
	// restore writes it back: the root's git settings (core.autocrlf,
	// core.eol), with which a checkout converts its files, and the largest
	// file a snapshot holds (a save of a root holding a larger one fails,
	// naming it). Its Base is the root's HEAD when nil.
	Checkout workspace.Checkout
}

// DefaultAuthor signs the checkpoint commits when BranchOptions.Author is empty.
const DefaultAuthor = "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"

// Branch keeps runs on a git branch of a remote repository, an orphan
// branch with one commit per checkpoint:
//
//	runs/<run-id>/checkpoint.json         the checkpoint
//	runs/<run-id>/ledger/AA/BB/NNNN.jsonl one chunk per save, as in the dir: store
//	runs/<run-id>/summaries/AA/BB/NNNN.md the summary of iteration NNNN
//	runs/<run-id>/reviews.json            the checkpoint's Decisions
//	runs/<run-id>/log/AA/BB/NNNN.log      the run log, one chunk per save that logs
//	runs/<run-id>/workspace               the loop root's tree (see package workspace)
//
// The numbered files are fanned out by hundreds (AA is NNNN/10000, BB the
// hundreds within it: chunk 12345 is ledger/01/23/12345.jsonl), so a save
// rewrites a few small trees, not directories that grow with the run.
// Branches written before the fan-out, whose files lie flat in ledger/,
// summaries/ and log/, are read as they are; a run's next save moves its
// files into the fanned layout. Full hundreds are consolidated: once the
// run has moved past a bucket, a save replaces its directory by one blob,
// ledger/AA/BB.jsonl (summaries/AA/BB.md, log/AA/BB.log), the bucket's
// files behind a header of their indices and sizes (see bucketMagic), one
// bucket per directory per save at most. The head's tree then holds a
// few entries per hundred iterations, so that git's connectivity check of
// each push (which walks the previous head's tree) does not grow with the
// run. A save from an older checkpoint that ends inside a consolidated
// bucket expands it back. Versions before the consolidation read such a
// run's checkpoint but not its ledger or log ("committed chunk … is
// missing"), nor the summaries of its consolidated buckets.
//
// Each commit is the commit point: readers see whole checkpoints only, and
// the branch holds nothing a checkpoint does not count (a save from an
// older checkpoint drops the chunks beyond it). A save pushes one commit
// whose parent is the head it last saw, with compare-and-swap on that
// head; when another writer moved the branch, it fetches the new head,
// re-applies this run's files on it and pushes again, so concurrent runs
// never lose each other's checkpoints. A save sends only the objects that
// are new along the paths it changed, through its own receive-pack
// exchange (go-git's Push would walk everything reachable from the
// remote's refs), so its cost does not grow with the run or the branch.
//
// Objects live in a local bare repository (BranchOptions.Cache): the first
// fetch takes the branch head at depth 1, later ones what was pushed since.
// A save writes its objects there, loose, before it pushes (git writes an
// object only after those it names, so a tree in the repository is
// complete there, after a crash too). It stays bounded: past 4,096 objects added or 32 packs, a save that finds
// no other Branch holding the cache open keeps only the head's objects
// (see maybeGC).
// Load always fetches; the other readers use the head last seen (fetched
// once if none was). A Branch is safe for concurrent use; it serialises
// its saves and reads. Across processes on one machine, hold a run with
// [Branch.Lock]; across machines, a second writer of one run is detected
// and refused with ErrLocked.
//
// Only a state branch is ever written: "HEAD", "refs/…" and names git
// refuses fail at open, and an existing branch that is not a state branch
// (the default branch, say) fails at the first fetch, both with an error
// wrapping ErrRefusedBranch; the remote is left as it was.
type Branch struct {
	opts   BranchOptions
	author object.Signature
	remote *remote
	cache  *cache
	objs   *objects
	hasher *workspace.Hasher
	locks  *Dir
	now    func() time.Time
	retry  backoff.Policy // pushRetry; tests replace its clock
	// beforePush, when set, runs before each push of a save (tests race it).
	beforePush func()

	mu      sync.Mutex // held by every operation: guards what follows and the store
	fetched bool
	head    plumbing.Hash       // the branch's commit as last seen; zero when it has none
	tree    plumbing.Hash       // head's tree
	mine    map[string][]string // per run, the states of its files this Branch pushed
	// exchange is the time spent in receive-pack exchanges (the push and
	// its pack), for the benchmark that splits a save's cost.
	exchange time.Duration
}

// OpenBranch opens the branch: store o describes. It reads the remote's
// URL from git configuration if it has to, and creates the local state
// repository; it does not reach the remote, whose errors surface at the
// first Load, Save or read.
func OpenBranch(ctx context.Context, o BranchOptions) (*Branch, error) {
	b, err := openBranch(o)
	if err != nil {
		return nil, fmt.Errorf("open state branch %q: %w", o.Branch, err)
	}
	return b, nil
}

func openBranch(o BranchOptions) (*Branch, error) {
	if err := checkBranchOptions(&o); err != nil {
		return nil, err
	}
	author, err := parseAuthor(o.Author)
	if err != nil {
		return nil, err
	}
	rem, err := newRemote(o)
	if err != nil {
		return nil, err
	}
	store, err := openCache(o.Cache)
	if err != nil {
		return nil, err
	}
	locks, err := OpenDir(filepath.Join(o.Cache, "locks"))
	if err != nil {
		return nil, err
	}
	cacheLock, err := locks.lockShared(cacheLockFile)
	if err != nil {
		locks.Close()
		return nil, fmt.Errorf("local state repository %q: %w", o.Cache, err)
	}
	objs := newObjects(store)
	sum := sha256.Sum256([]byte(rem.URL() + "\x00" + o.Branch))
	c := &cache{
		path: o.Cache, store: store, objs: objs, lock: cacheLock, limits: defaultCacheLimits, gcAt: defaultCacheLimits, looseBase: -1,
		hint: filepath.Join(o.Cache, "loop-heads", hex.EncodeToString(sum[:8])),
	}
	c.haves = c.readHint()
	return &Branch{
		opts: o, author: author, remote: rem, cache: c, objs: objs,
		hasher: workspace.NewHasherWith(o.Root, o.Checkout), locks: locks, now: time.Now, retry: pushRetry, mine: map[string][]string{},
	}, nil
}

// checkBranchOptions validates o and fills in its defaults.
func checkBranchOptions(o *BranchOptions) error {
	if o.Root == "" {
		return errors.New("no loop root")
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return err
	}
	o.Root = root
	if err := checkBranchName(o.Branch); err != nil {
		return err
	}
	if o.Author == "" {
		o.Author = DefaultAuthor
	}
	if o.Cache == "" {
		o.Cache = filepath.Join(root, ".loop", "state-git")
	}
	o.Cache, err = filepath.Abs(o.Cache)
	return err
}

// parseAuthor parses "name <email>".
func parseAuthor(s string) (object.Signature, error) {
	name, email, ok := strings.Cut(strings.TrimSuffix(strings.TrimSpace(s), ">"), "<")
	name = strings.TrimSpace(name)
	if !ok || name == "" || email == "" || !strings.HasSuffix(strings.TrimSpace(s), ">") ||
		strings.ContainsAny(name+email, "<>\n\x00") {
		return object.Signature{}, fmt.Errorf("author %q: want \"name <email>\"", s)
	}
	return object.Signature{Name: name, Email: email}, nil
}

// openCache opens the bare repository at path, creating it if needed.
func openCache(path string) (*filesystem.Storage, error) {
	repo, err := git.PlainOpen(path)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
		repo, err = git.PlainInit(path, true)
		if errors.Is(err, git.ErrRepositoryAlreadyExists) {
			repo, err = git.PlainOpen(path) // another process created it
		}
	}
	if err != nil {
		return nil, fmt.Errorf("local state repository %q: %w", path, err)
	}
	fs, ok := repo.Storer.(*filesystem.Storage)
	if !ok {
		return nil, fmt.Errorf("local state repository %q: not a filesystem repository", path)
	}
	return fs, nil
}

// Path is the local state repository: the bare repository that caches
// the branch.
func (b *Branch) Path() string { return b.opts.Cache }

// Close releases the local state repository. Locks taken with Lock stay
// held until their unlock functions are called.
func (b *Branch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.cache.close()
	if cerr := b.locks.Close(); err == nil {
		err = cerr
	}
	return err
}

// Lock holds the run for this process on this machine, as [Dir.Lock] does,
// with a lock file in the local state repository. Writers on other
// machines are kept apart by the branch itself: a save that finds another
// writer's checkpoint of its run fails with ErrLocked.
func (b *Branch) Lock(runID string) (unlock func() error, err error) {
	return b.locks.Lock(runID)
}
