package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/loop-action/loop-action/ledger"
	"github.com/loop-action/loop-action/loop"
)

// saved is a protected file as it was before a wave.
type saved struct {
	mode    fs.FileMode
	content []byte // a file's bytes, or a symlink's target
}

// protectGuard holds the protected files as they were before a wave.
type protectGuard struct {
	root     string
	patterns []string
	files    map[string]saved
}

// guardProtected records the protected files before a wave in which a
// builder runs; with no builder running, nothing is guarded.
func (r *run) guardProtected(runs []*nodeRun) *protectGuard {
	if len(ranNames(runs)) == 0 {
		return nil
	}
	g := &protectGuard{root: r.opts.Root, patterns: protectedPatterns(r.cfg, r.opts.Root)}
	g.files = g.scan()
	return g
}

// protectedPatterns are [protect] paths plus the loop config itself.
func protectedPatterns(cfg *loop.Config, root string) []string {
	pats := slices.Clone(cfg.Protect.Paths)
	if cfg.File == "" {
		return pats
	}
	f := cfg.File
	if filepath.IsAbs(f) {
		rel, err := filepath.Rel(root, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			return pats
		}
		f = rel
	}
	return append(pats, filepath.ToSlash(filepath.Clean(f)))
}

// scan reads every protected file under the root (never .git or .loop).
func (g *protectGuard) scan() map[string]saved {
	out := map[string]saved{}
	_ = filepath.WalkDir(g.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(g.root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == ".loop" || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !g.protected(rel) {
			return nil
		}
		if s, ok := read(path, d); ok {
			out[rel] = s
		}
		return nil
	})
	return out
}

func (g *protectGuard) protected(rel string) bool {
	for _, p := range g.patterns {
		if ok, _ := doublestar.Match(p, rel); ok {
			return true
		}
	}
	return false
}

func read(path string, d fs.DirEntry) (saved, bool) {
	info, err := d.Info()
	if err != nil {
		return saved{}, false
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(path)
		return saved{mode: info.Mode(), content: []byte(t)}, err == nil
	}
	if !info.Mode().IsRegular() {
		return saved{}, false
	}
	b, err := os.ReadFile(path)
	return saved{mode: info.Mode(), content: b}, err == nil
}

// revert puts every protected file back as it was before the wave, removes
// protected files the wave created, records each revert and counts the
// wave's changes as one node failure. It returns the reverted paths.
func (g *protectGuard) revert(r *run, it int, nodes []string) []string {
	if g == nil {
		return nil
	}
	now := g.scan()
	var paths []string
	for _, rel := range sortedKeys(g.files, now) {
		before, had := g.files[rel]
		after, has := now[rel]
		what := change(before, had, after, has)
		if what == "" {
			continue
		}
		if err := g.restore(rel, before, had); err != nil {
			what += "; restoring it failed: " + err.Error()
		}
		r.rec.Record(ledger.Event{Type: ledger.ProtectedReverted, Iteration: it, Path: rel, Nodes: nodes, Reason: what})
		paths = append(paths, rel)
	}
	if len(paths) > 0 {
		r.nodeFailed("changes to protected paths were reverted")
	}
	return paths
}

// nodeFailed counts a failure the runner found in a wave's changes, and
// escalates when failures reach max_node_failures.
func (r *run) nodeFailed(why string) {
	r.cp.NodeFailures++
	if max := r.cfg.Stop.MaxNodeFailures; max > 0 && r.cp.NodeFailures >= max && r.escalate == "" {
		r.escalate = fmt.Sprintf("%s (max_node_failures = %d) after %s", plural(r.cp.NodeFailures, "node failure"), max, why)
	}
}

func change(before saved, had bool, after saved, has bool) string {
	switch {
	case had && !has:
		return "deleted"
	case !had && has:
		return "created"
	case before.mode != after.mode:
		return "mode changed"
	case !bytes.Equal(before.content, after.content):
		return "modified"
	}
	return ""
}

func (g *protectGuard) restore(rel string, s saved, had bool) error {
	path := filepath.Join(g.root, filepath.FromSlash(rel))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !had {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if s.mode&fs.ModeSymlink != 0 {
		return os.Symlink(string(s.content), path)
	}
	if err := os.WriteFile(path, s.content, s.mode.Perm()); err != nil {
		return err
	}
	return os.Chmod(path, s.mode.Perm())
}

func sortedKeys(a, b map[string]saved) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
