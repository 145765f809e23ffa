package isolate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Options configure a Manager.
type Options struct {
	// Protected reports whether a path (slash-separated, relative to the
	// loop root) is protected; nil protects nothing.
	Protected func(rel string) bool
	// MaxFileSize is the largest regular file seeded into a worktree or
	// published from one (a snapshot holds none larger); 0 is
	// workspace.DefaultMaxFileSize. A larger file is never read: in the
	// root it fails Prepare, in a worktree its publication is refused
	// (ReasonTooLarge).
	MaxFileSize int64
}

// Manager owns the worktrees of one run. Its methods are safe for
// concurrent use; they run one at a time.
type Manager struct {
	root string
	opts Options
	now  func() time.Time

	mu       sync.Mutex
	index    *index             // the loop root; nil until the first Prepare
	repo     *rootRepo          // the root's repository; nil if it has none
	repoRead bool               // repo and repoErr are this iteration's
	repoErr  error              // the root's repository could not be read
	trees    map[string]*tree   // by node
	writers  map[string]written // published in the current iteration, by path
	rulesMod bool               // a .gitignore was published in the current Publish
}

// New returns a Manager for the loop root root. Nothing is read or written
// until the first Prepare.
func New(root string, opts Options) *Manager {
	return &Manager{root: root, opts: opts, now: time.Now, trees: map[string]*tree{}, writers: map[string]written{}}
}

// BeginIteration starts an iteration: conflicts name a node as the winner
// only for paths it published since. It reads the root's repository (its
// HEAD, shallow list and HEAD's tree) for the iteration's worktrees now,
// while no agent runs: Prepare runs while other nodes' agents do.
func (m *Manager) BeginIteration() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writers = map[string]written{}
	m.readRepo()
}

// written is a publication: which node wrote what.
type written struct {
	node string
	st   state
}

// Prepare returns the worktree of node, creating it on first use, and
// brings it up to date with the loop root: every path the root changed
// since the worktree was last seeded or published gets the root's version,
// unless the node changed it too (its work is never overwritten).
func (m *Manager) Prepare(ctx context.Context, node string) (string, error) {
	if err := checkNode(node); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(); err != nil {
		return "", err
	}
	if !m.repoRead {
		m.readRepo()
	}
	if m.repoErr != nil {
		return "", m.repoErr
	}
	t := m.trees[node]
	if t == nil {
		t, err := m.create(ctx, node)
		if err != nil {
			return "", fmt.Errorf("create worktree of %q: %w", node, err)
		}
		m.trees[node] = t
		return t.dir, nil
	}
	if err := m.reseed(ctx, t); err != nil {
		return "", fmt.Errorf("seed worktree of %q: %w", node, err)
	}
	return t.dir, nil
}

// Publish copies into the loop root what each node changed in its
// worktree, nodes in the given order (see the package documentation for
// the rules). Nodes without a worktree are skipped.
func (m *Manager) Publish(ctx context.Context, nodes []string) (Report, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rulesMod = false
	var rep Report
	for _, node := range nodes {
		t := m.trees[node]
		if t == nil {
			continue
		}
		if err := m.publish(ctx, t, &rep); err != nil {
			return rep, fmt.Errorf("publish worktree of %q: %w", node, err)
		}
	}
	return rep, nil
}

// Remove deletes every worktree (all of
// .loop/worktrees). The Manager can be used again afterwards.
func (m *Manager) Remove() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, t := range m.trees {
		errs = append(errs, t.close())
	}
	m.trees = map[string]*tree{}
	m.repo, m.repoErr, m.repoRead = nil, nil, false
	if m.index != nil {
		errs = append(errs, m.index.r.Close(), m.index.w.Close())
		m.index = nil
	}
	if err := os.RemoveAll(m.worktrees()); err != nil {
		errs = append(errs, fmt.Errorf("remove worktrees: %w", err))
	}
	return errors.Join(errs...)
}

// open opens the loop root, once.
func (m *Manager) open() error {
	if m.index != nil {
		return nil
	}
	r, err := workspace.OpenRoot(m.root)
	if err != nil {
		return fmt.Errorf("open loop root: %w", err)
	}
	w, err := workspace.OpenWriter(m.root)
	if err != nil {
		r.Close()
		return err
	}
	if err := os.MkdirAll(m.worktrees(), 0o755); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("create worktrees directory: %w", err)
	}
	m.index = &index{dir: m.root, r: r, w: w, ents: map[string]rootEntry{}, now: m.now, limit: m.limit()}
	return nil
}

// readRepo reads the root's repository afresh: HEAD may have moved, and
// the root may have become a repository or ceased to be one.
func (m *Manager) readRepo() {
	repo, err := readRepo(m.root, m.repo)
	if errors.Is(err, errNoRepo) {
		repo, err = nil, nil
	}
	m.repo, m.repoErr, m.repoRead = repo, err, true
}

func (m *Manager) worktrees() string { return filepath.Join(m.root, ".loop", "worktrees") }

// limit is the largest file the Manager copies or reads (Options.MaxFileSize).
func (m *Manager) limit() int64 {
	if m.opts.MaxFileSize <= 0 {
		return workspace.DefaultMaxFileSize
	}
	return m.opts.MaxFileSize
}
