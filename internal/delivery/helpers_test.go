package delivery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// files are a tree's content by path; a value starting with "->" is a
// symbolic link to the rest, one starting with "x:" an executable file.
type files map[string]string

// write creates files under dir.
func write(t testing.TB, dir string, fs files) {
	t.Helper()
	for rel, body := range fs {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(p)
		var err error
		switch {
		case strings.HasPrefix(body, "->"):
			err = os.Symlink(body[2:], p)
		case strings.HasPrefix(body, "x:"):
			err = os.WriteFile(p, []byte(body[2:]), 0o755)
		default:
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// origin makes a bare repository holding one commit of fs on main, with
// the paths of force added although ignored, and returns its path and
// the commit.
func origin(t testing.TB, fs files, force ...string) (bare, head string) {
	t.Helper()
	dir := t.TempDir()
	bare = filepath.Join(dir, "origin.git")
	gitfake.InitBare(t, bare)
	seed := filepath.Join(dir, "seed")
	gitfake.Git(t, "", "init", "-q", "-b", "main", seed)
	write(t, seed, fs)
	gitfake.Git(t, seed, "add", "-A")
	for _, p := range force {
		gitfake.Git(t, seed, "add", "-f", p)
	}
	gitfake.Git(t, seed, "commit", "-q", "-m", "base")
	gitfake.Git(t, seed, "push", "-q", bare, "main")
	return bare, strings.TrimSpace(gitfake.Git(t, seed, "rev-parse", "HEAD"))
}

// clone makes a depth-1 clone of url, as actions/checkout does.
func clone(t testing.TB, url string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	gitfake.Git(t, "", "clone", "-q", "--depth=1", "--no-local", url, root)
	return root
}

// objectCount counts the objects of a bare repository.
func objectCount(t testing.TB, bare string) int {
	t.Helper()
	n := 0
	for line := range strings.SplitSeq(gitfake.Git(t, "", "--git-dir="+bare, "count-objects", "-v"), "\n") {
		for _, key := range []string{"count: ", "in-pack: "} {
			if v, ok := strings.CutPrefix(line, key); ok {
				var k int
				for _, c := range v {
					k = k*10 + int(c-'0')
				}
				n += k
			}
		}
	}
	return n
}
