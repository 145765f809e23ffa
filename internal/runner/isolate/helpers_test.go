package isolate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// env is a loop root with a Manager, driven the way the runner drives it.
type env struct {
	t    *testing.T
	root string
	m    *Manager
	dirs map[string]string // worktree of each prepared node
}

// newEnv makes a loop root holding files (path → content) and a Manager
// on it.
func newEnv(t *testing.T, files map[string]string, protected ...string) *env {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		writeFile(t, root, p, c)
	}
	opts := Options{Protected: func(rel string) bool {
		for _, p := range protected {
			if p == rel {
				return true
			}
		}
		return false
	}}
	m := New(root, opts)
	t.Cleanup(func() {
		if err := m.Remove(); err != nil {
			t.Errorf("Remove: %v", err)
		}
	})
	m.BeginIteration()
	return &env{t: t, root: root, m: m, dirs: map[string]string{}}
}

func (e *env) prepare(node string) string {
	e.t.Helper()
	dir, err := e.m.Prepare(context.Background(), node)
	if err != nil {
		e.t.Fatalf("Prepare(%q): %v", node, err)
	}
	e.dirs[node] = dir
	return dir
}

func (e *env) publish(nodes ...string) Report {
	e.t.Helper()
	rep, err := e.m.Publish(context.Background(), nodes)
	if err != nil {
		e.t.Fatalf("Publish(%q): %v", nodes, err)
	}
	return rep
}

// write writes content to rel in node's worktree.
func (e *env) write(node, rel, content string) {
	e.t.Helper()
	writeFile(e.t, e.dirs[node], rel, content)
}

// writeRoot writes content to rel in the loop root.
func (e *env) writeRoot(rel, content string) { e.t.Helper(); writeFile(e.t, e.root, rel, content) }

// inRoot returns the content of rel in the loop root, "<none>" if absent.
func (e *env) inRoot(rel string) string { e.t.Helper(); return readFile(e.t, e.root, rel) }

// inTree returns the content of rel in node's worktree, "<none>" if absent.
func (e *env) inTree(node, rel string) string { e.t.Helper(); return readFile(e.t, e.dirs[node], rel) }

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			t.Fatal(err)
		}
		return "-> " + target
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// git runs git in dir.
func git(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %q: %v\n%s", args, err, out)
	}
}
