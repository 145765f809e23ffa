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
	"github.com/loop-action/loop-action/internal/gitremote"
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
// The numbered files are fanned out by hundreds, and full hundreds
// consolidated into one blob (see fanPath and bucketMagic), so that a save
// rewrites a few small trees and git's connectivity check of each push
// (which walks the previous head's tree) does not grow with the run.
// Branches written before the fan-out are read as they are, and a run's
// next save moves its files. Versions before the consolidation read such a
// run's checkpoint but not its ledger or log ("committed chunk … is
// missing"), nor the summaries of its consolidated buckets.
//
// Each commit is the commit point: readers see whole checkpoints only, and
// the branch holds nothing a checkpoint does not count. A save pushes one
// commit on the head it last saw, with compare-and-swap on that head, and
// when another writer moved the branch re-applies its run's files on the
// new head (see [Branch.Save]), so concurrent runs never lose each other's
// checkpoints.
//
// Objects live in a local bare repository (BranchOptions.Cache): the first
// fetch takes the branch head at depth 1, later ones what was pushed since.
// A save writes its objects there, loose, before it pushes (git writes an
// object only after those it names, so a tree in the repository is
// complete there, after a crash too); the cache is kept bounded (see
// maybeGC). Load always fetches; the other readers use the head last seen
// (fetched once if none was). A Branch is safe for concurrent use. Across
// processes on one machine, hold a run with [Branch.Lock]; across
// machines, a second writer of one run is refused with ErrLocked.
//
// Only a state branch is ever written (see ErrRefusedBranch): a refused
// name fails at open, an existing branch that is not a state branch at the
// first fetch; the remote is left as it was.
type Branch struct {
	reads
	opts   BranchOptions
	author object.Signature
	remote *gitremote.Remote // fetches and pushes the branch (see package gitremote)
	ref    plumbing.ReferenceName
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
	url, err := resolveRemote(o.Remote, o.Root)
	if err != nil {
		return nil, err
	}
	rem, err := gitremote.Open(url, o.Token)
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
	b := &Branch{
		opts: o, author: author, remote: rem, ref: plumbing.NewBranchReferenceName(o.Branch), cache: c, objs: objs,
		hasher: workspace.NewHasherWith(o.Root, o.Checkout), locks: locks, now: time.Now, retry: pushRetry, mine: map[string][]string{},
	}
	b.reads = reads{b}
	return b, nil
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

// resolveRemote returns the URL remote names: remote itself when it is a
// URL or a path, else the first URL of the remote of that name ("" is
// "origin") in the configuration of the repository holding root.
func resolveRemote(remote, root string) (string, error) {
	switch {
	case remote == "":
		remote = "origin"
	case strings.Contains(remote, "://") || filepath.IsAbs(remote):
		return remote, nil
	case strings.HasPrefix(remote, "./") || strings.HasPrefix(remote, "../"):
		return filepath.Join(root, remote), nil
	case strings.Contains(remote, ":"): // scp-like: git@host:owner/repo
		return remote, nil
	}
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return "", fmt.Errorf("remote %q: the loop root %q is not in a git repository: %w", remote, root, err)
	}
	r, err := repo.Remote(remote)
	if err != nil {
		return "", fmt.Errorf("remote %q of the repository at %q: %w", remote, root, err)
	}
	urls := r.Config().URLs
	if len(urls) == 0 {
		return "", fmt.Errorf("remote %q of the repository at %q has no URL", remote, root)
	}
	u := urls[0]
	if !strings.Contains(u, ":") && !filepath.IsAbs(u) { // a relative path: git resolves it in the worktree
		if wt, err := repo.Worktree(); err == nil {
			u = filepath.Join(wt.Filesystem.Root(), u)
		}
	}
	return u, nil
}
