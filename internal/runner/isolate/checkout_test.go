package isolate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gitEnv is the environment of git in these tests: no system or global
// configuration, and git never finds the loop root above a worktree.
func gitEnv(t *testing.T, dir string) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+t.TempDir(),
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z")
}

// runIn runs name with args in dir (a scripted agent or git) and returns
// its output; it fails the test if the command fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, append(gitEnv(t, dir), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q in %s: %v\n%s", name, args, dir, err, out)
	}
	return string(out)
}

// agent returns the path of a scripted agent of testdata/agents.
func agent(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "agents", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// repoEnv is a loop root that is a repository with two commits ("first",
// "second"), an uncommitted change (b.txt) and an untracked file (u.txt).
func repoEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, map[string]string{"a.txt": "one\n", "b.txt": "b\n", "d/c.txt": "c\n", ".gitignore": "*.log\n"})
	git(t, e.root, "init", "-q", "-b", "main")
	git(t, e.root, "add", "-A")
	git(t, e.root, "commit", "-qm", "first")
	e.writeRoot("a.txt", "one\ntwo\n")
	git(t, e.root, "commit", "-qam", "second")
	e.writeRoot("b.txt", "uncommitted\n")
	e.writeRoot("u.txt", "untracked\n")
	e.m.BeginIteration() // reads the repository newEnv's Manager did not see
	return e
}

// rootRepoState is everything of the root's repository a node must never
// change: refs, HEAD, config, hooks, the objects it holds, the index.
func rootRepoState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{"refs": runIn(t, root, nil, "git", "for-each-ref")}
	for _, name := range []string{"HEAD", "config", "index", "packed-refs"} {
		out[name] = readFile(t, filepath.Join(root, ".git"), name)
	}
	var objects, hooks []string
	for dir, list := range map[string]*[]string{"objects": &objects, "hooks": &hooks} {
		base := filepath.Join(root, ".git", dir)
		filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(base, p)
				*list = append(*list, rel+" "+readFile(t, base, rel))
			}
			return nil
		})
		sort.Strings(*list)
		out[dir] = strings.Join(*list, "\n")
	}
	return out
}

func TestNodeRepositoryShowsItsOwnChange(t *testing.T) {
	t.Parallel()
	e := repoEnv(t)
	dir := e.prepare("coder")
	got := runIn(t, dir, nil, agent(t, "git-look.sh"))
	want := "== status\n M a.txt\n?? new.txt\n== diff\na.txt\n== log\nloop: base of node coder\nsecond\nfirst\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what git showed the node (-want +got):\n%s", diff)
	}
	rep := e.publish("coder")
	wantPub := []Change{{Node: "coder", Path: "a.txt", Kind: Modified}, {Node: "coder", Path: "new.txt", Kind: Created}}
	if diff := cmp.Diff(wantPub, rep.Published); diff != "" || len(rep.Refused) > 0 {
		t.Errorf("published (-want +got):\n%s\nrefused: %+v", diff, rep.Refused)
	}
	e.m.BeginIteration()
	e.prepare("coder")
	if got := runIn(t, dir, nil, "git", "status", "--porcelain"); got != "" {
		t.Errorf("git status after publishing and seeding again = %q, want a clean tree", got)
	}
	if got, want := runIn(t, dir, nil, "git", "show", "--format=", "--name-only", "HEAD"), "a.txt\nb.txt\nnew.txt\nu.txt\n"; got != want {
		t.Errorf("the base commit changes %q, want %q (the root's uncommitted work and the node's published change)", got, want)
	}
}

func TestNodeGitNeverReachesTheRoot(t *testing.T) {
	t.Parallel()
	for _, hostile := range []string{"", "alternates", "symlink"} {
		t.Run("hostile="+hostile, func(t *testing.T) {
			t.Parallel()
			e := repoEnv(t)
			dir := e.prepare("coder")
			before := rootRepoState(t, e.root)
			runIn(t, dir, []string{"HOSTILE=" + hostile}, agent(t, "git-hostile.sh"))
			rep := e.publish("coder")
			if diff := cmp.Diff([]Change{{Node: "coder", Path: "a.txt", Kind: Modified}}, rep.Published); diff != "" || len(rep.Refused) > 0 {
				t.Errorf("published (-want +got):\n%s\nrefused: %+v", diff, rep.Refused)
			}
			if got, want := e.inRoot("a.txt"), "working tree of the node\n"; got != want {
				t.Errorf("a.txt in the root = %q, want the node's working tree %q", got, want)
			}
			e.m.BeginIteration()
			e.prepare("coder")
			if diff := cmp.Diff(before, rootRepoState(t, e.root)); diff != "" {
				t.Errorf("the root's repository changed (-before +after):\n%s", diff)
			}
			checkFreshRepo(t, e.root, dir)
		})
	}
}

// checkFreshRepo checks that the node's repository in dir holds nothing
// its agent left: one branch, no tag, the runner's config, no hooks, the
// root's objects as the only alternate, and nothing its hooks or
// fsmonitor would have created.
func checkFreshRepo(t *testing.T, root, dir string) {
	t.Helper()
	if got, want := runIn(t, dir, nil, "git", "for-each-ref", "--format=%(refname)"), "refs/heads/main\n"; got != want {
		t.Errorf("node refs = %q, want %q", got, want)
	}
	if got := readFile(t, dir, ".git/config"); got != gitConfig {
		t.Errorf("node config = %q, want the runner's", got)
	}
	if got, want := readFile(t, dir, ".git/objects/info/alternates"), filepath.Join(root, ".git", "objects")+"\n"; got != want {
		t.Errorf("alternates = %q, want %q", got, want)
	}
	if got := readFile(t, dir, ".git/hooks"); got != "<none>" {
		t.Errorf(".git/hooks = %q, want none", got)
	}
	runIn(t, dir, nil, "git", "status", "--porcelain")
	runIn(t, dir, nil, "git", "fsck", "--no-dangling")
	for _, d := range []string{root, dir} {
		for _, f := range []string{"fsmonitor-ran", "hook-ran"} {
			if got := readFile(t, d, f); got != "<none>" {
				t.Errorf("%s exists in %s: the node's git ran the runner's code", f, d)
			}
		}
	}
}

func TestShallowRootRepository(t *testing.T) {
	t.Parallel()
	src := repoEnv(t)
	git(t, src.root, "commit", "-qam", "third")
	root := filepath.Join(t.TempDir(), "shallow")
	git(t, src.root, "clone", "-q", "--depth", "1", "file://"+src.root, root)
	m := New(root, Options{})
	t.Cleanup(func() { m.Remove() })
	dir, err := m.Prepare(context.Background(), "coder")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runIn(t, dir, nil, "git", "log", "--format=%s"), "loop: base of node coder\nthird\n"; got != want {
		t.Errorf("git log = %q, want %q", got, want)
	}
	writeFile(t, dir, "d/c.txt", "changed\n")
	if got, want := runIn(t, dir, nil, "git", "status", "--porcelain"), " M d/c.txt\n"; got != want {
		t.Errorf("git status = %q, want %q", got, want)
	}
	runIn(t, dir, nil, "git", "fsck", "--no-dangling")
}

func TestRootWithoutRepositoryGetsAPlainCopy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "one\n", ".git/info/exclude": "x\n"})
	dir := e.prepare("coder")
	if got := readFile(t, dir, ".git"); got != "<none>" {
		t.Errorf("worktree .git = %q, want none: the root has no repository", got)
	}
	if got := e.inTree("coder", "a.txt"); got != "one\n" {
		t.Errorf("a.txt in the worktree = %q", got)
	}
}

// TestNodeRepoKeepsOnlyItsObjects checks what a fresh .git keeps of the
// one before: its loose objects, and nothing of objects/info, where git
// would read grafts.
func TestNodeRepoKeepsOnlyItsObjects(t *testing.T) {
	t.Parallel()
	e := repoEnv(t)
	dir := e.prepare("coder")
	writeFile(t, dir, ".git/objects/info/grafts", "planted\n")
	writeFile(t, dir, ".git/objects/info/packs", "planted\n")
	writeFile(t, dir, ".git/objects/zz/kept", "an object of the node's\n")
	e.m.BeginIteration()
	e.prepare("coder")
	entries, err := os.ReadDir(filepath.Join(dir, ".git", "objects", "info"))
	if err != nil || len(entries) != 1 || entries[0].Name() != "alternates" {
		t.Errorf(".git/objects/info = %v, %v; want only alternates", entries, err)
	}
	if got := readFile(t, dir, ".git/objects/zz/kept"); got != "an object of the node's\n" {
		t.Errorf("a loose object of the node's = %q, want it kept", got)
	}
	checkFreshRepo(t, e.root, dir)
}
