package action

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loop-action/loop-action/internal/workspace"
)

// memGit is git for the decision tests, as Git declares it: a commit is a
// map of files; its snapshot is what package workspace computes for a
// checkout of those files; the remote's refs are a map, and a push is a
// compare-and-swap on it, recorded. It decides nothing: the action's
// decisions (what to build, whether to push, where) are under test.
type memGit struct {
	t       *testing.T
	mu      sync.Mutex
	commits map[string]memCommit // by sha
	refs    map[string]string    // the remote's: full ref name → sha
	pushes  []memPush            // in the order tried
	moves   map[string]string    // ref → sha someone pushes it to while the next commit is built
	failing map[string]error     // by method name
	heads   map[string]string    // the commit each checkout was made of, by directory
}

// memCommit is a commit: its files (path → content; a link's content is
// "-> target"), their snapshot, and what made it.
type memCommit struct {
	Files    map[string]string
	Snapshot string
	Parent   string
	Message  string
	Author   Identity
}

// memPush is one push tried.
type memPush struct {
	Ref, Old, SHA, Token string
	Moved                bool
}

func newMemGit(t *testing.T) *memGit {
	return &memGit{t: t, commits: map[string]memCommit{}, refs: map[string]string{}, moves: map[string]string{}, failing: map[string]error{}, heads: map[string]string{}}
}

var _ Git = (*memGit)(nil)

// commit records a commit of files on parent and returns its sha.
func (g *memGit) commit(parent string, files map[string]string, message string) string {
	g.t.Helper()
	snap := g.snapshot(files)
	sum := sha1.Sum([]byte(parent + "\x00" + snap + "\x00" + message))
	sha := hex.EncodeToString(sum[:])
	g.mu.Lock()
	defer g.mu.Unlock()
	g.commits[sha] = memCommit{Files: maps.Clone(files), Snapshot: snap, Parent: parent, Message: message}
	return sha
}

// snapshot is the workspace snapshot of a checkout of files.
func (g *memGit) snapshot(files map[string]string) string {
	g.t.Helper()
	dir := g.t.TempDir()
	writeTree(g.t, dir, files)
	snap, err := workspace.NewHasher(dir).Snapshot(context.Background())
	if err != nil {
		g.t.Fatal(err)
	}
	return string(snap)
}

// checkout writes commit sha's files into a new directory, as
// actions/checkout leaves a job's workspace.
func (g *memGit) checkout(sha string) string {
	g.t.Helper()
	g.mu.Lock()
	c, ok := g.commits[sha]
	g.mu.Unlock()
	if !ok {
		g.t.Fatalf("memGit: no commit %s", sha)
	}
	dir := g.t.TempDir()
	writeTree(g.t, dir, c.Files)
	g.mu.Lock()
	g.heads[dir] = sha
	g.mu.Unlock()
	return dir
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads what a snapshot of root includes.
func readTree(root string) (map[string]string, error) {
	names, err := workspace.NewHasher(root).Files(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			out[n] = "-> " + target
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out[n] = string(b)
	}
	return out, nil
}

// The seam, as Git declares it.

func (g *memGit) CommitSnapshot(_ string, sha string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.failing["CommitSnapshot"]; err != nil {
		return "", err
	}
	c, ok := g.commits[sha]
	if !ok {
		return "", fmt.Errorf("commit %s: object not found", sha)
	}
	return c.Snapshot, nil
}

func (g *memGit) CheckoutChanges(root, sha string, _ workspace.Checkout) (Checkout, error) {
	g.mu.Lock()
	c, ok := g.commits[sha]
	co := Checkout{Head: g.heads[root]}
	g.mu.Unlock()
	if !ok {
		return Checkout{}, fmt.Errorf("commit %s: object not found", sha)
	}
	now, err := readTree(root)
	if err != nil {
		return Checkout{}, err
	}
	for _, p := range slices.Sorted(maps.Keys(union(c.Files, now))) {
		if k := changeKind(c.Files, now, p); k != "" {
			co.Changes = append(co.Changes, Change{Path: p, Kind: k})
		}
	}
	return co, nil
}

func (g *memGit) Tip(_ context.Context, _ Remote, ref string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.failing["Tip"]; err != nil {
		return "", err
	}
	return g.refs[ref], nil
}

func (g *memGit) Build(_ context.Context, s CommitSpec) (*Built, error) {
	g.mu.Lock()
	base, ok := g.commits[s.Base]
	err := g.failing["Build"]
	for ref, to := range g.moves { // someone pushes while the loop delivers
		g.refs[ref] = to
		delete(g.moves, ref)
	}
	g.mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("base %s: object not found", s.Base)
	}
	now, err := readTree(s.Root)
	if err != nil {
		return nil, err
	}
	files := maps.Clone(base.Files)
	var changes, excluded []Change
	for _, p := range slices.Sorted(maps.Keys(union(base.Files, now))) {
		c := Change{Path: p, Kind: changeKind(base.Files, now, p)}
		switch {
		case c.Kind == "":
		case s.Exclude != nil && s.Exclude(p):
			excluded = append(excluded, c)
		default:
			changes = append(changes, c)
			if c.Kind == "deleted" {
				delete(files, p)
			} else {
				files[p] = now[p]
			}
		}
	}
	sha := g.commit(s.Base, files, s.Message)
	g.mu.Lock()
	c := g.commits[sha]
	c.Author = s.Author
	g.commits[sha] = c
	g.mu.Unlock()
	return &Built{SHA: sha, Snapshot: c.Snapshot, Changes: changes, Excluded: excluded,
		Patch: func() (string, error) { return patch(base.Files, files, changes), nil },
		Push:  func(ctx context.Context, r Remote, ref, old string) error { return g.push(r, ref, old, sha) },
	}, nil
}

func (g *memGit) push(r Remote, ref, old, sha string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := memPush{Ref: ref, Old: old, SHA: sha, Token: r.Token}
	if err := g.failing["Push"]; err != nil {
		g.pushes = append(g.pushes, p)
		return err
	}
	if g.refs[ref] != old {
		p.Moved = true
		g.pushes = append(g.pushes, p)
		return fmt.Errorf("push %s: %w: it is at %q, not %q", ref, ErrMoved, g.refs[ref], old)
	}
	g.refs[ref] = sha
	g.pushes = append(g.pushes, p)
	return nil
}

// tried are the pushes tried, oldest first.
func (g *memGit) tried() []memPush {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.pushes)
}

// get is commit sha, with a copy of its files.
func (g *memGit) get(sha string) memCommit {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.commits[sha]
	c.Files = maps.Clone(c.Files)
	return c
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func changeKind(base, now map[string]string, p string) string {
	was, inBase := base[p]
	is, inNow := now[p]
	switch {
	case !inBase:
		return "added"
	case !inNow:
		return "deleted"
	case strings.HasPrefix(was, "-> ") != strings.HasPrefix(is, "-> "):
		return "type"
	case was != is:
		return "modified"
	}
	return ""
}

// patch is a diff good enough for the tests: each changed path with its
// old and new lines.
func patch(from, to map[string]string, changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", c.Path, c.Path)
		for l := range strings.Lines(from[c.Path]) {
			b.WriteString("-" + l)
		}
		for l := range strings.Lines(to[c.Path]) {
			b.WriteString("+" + l)
		}
	}
	return b.String()
}
