package isolate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// prepareRepo prepares node's worktree of root with a new Manager.
func prepareRepo(t *testing.T, root, node string) (*Manager, string) {
	t.Helper()
	m := New(root, Options{})
	t.Cleanup(func() { m.Remove() })
	dir, err := m.Prepare(context.Background(), node)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return m, dir
}

// TestRootRepositoryShapes: an unborn HEAD, a detached HEAD, a root that
// is a linked worktree (.git is a gitdir: file) and a root whose HEAD
// moved between runs all give the node a repository whose log and status
// are right; a SHA-256 root gives a plain copy.
func TestRootRepositoryShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		setup  func(t *testing.T, e *env) string // returns the loop root
		log    string                            // git log --format=%s; "" for no repository
		branch string                            // git symbolic-ref HEAD, "" if detached
	}{{
		name:   "unborn HEAD",
		setup:  func(t *testing.T, e *env) string { git(t, e.root, "init", "-q", "-b", "trunk"); return e.root },
		log:    "loop: base of node coder\n",
		branch: "refs/heads/trunk\n",
	}, {
		name: "detached HEAD",
		setup: func(t *testing.T, e *env) string {
			commitAll(t, e.root)
			git(t, e.root, "checkout", "-q", "--detach")
			return e.root
		},
		log:    "loop: base of node coder\nfirst\n",
		branch: "",
	}, {
		name: "linked worktree",
		setup: func(t *testing.T, e *env) string {
			commitAll(t, e.root)
			linked := filepath.Join(t.TempDir(), "linked")
			git(t, e.root, "worktree", "add", "-q", "-b", "side", linked)
			return linked
		},
		log:    "loop: base of node coder\nfirst\n",
		branch: "refs/heads/side\n",
	}, {
		name: "sha256",
		setup: func(t *testing.T, e *env) string {
			git(t, e.root, "init", "-q", "--object-format=sha256")
			return e.root
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"a.txt": "one\n"})
			root := c.setup(t, e)
			_, dir := prepareRepo(t, root, "coder")
			if c.log == "" {
				if got := readFile(t, dir, ".git"); got != "<none>" {
					t.Errorf("worktree .git = %q, want a plain copy", got)
				}
				return
			}
			if got := runIn(t, dir, nil, "git", "log", "--format=%s"); got != c.log {
				t.Errorf("git log = %q, want %q", got, c.log)
			}
			if got := runIn(t, dir, nil, "git", "status", "--porcelain"); got != "" {
				t.Errorf("git status = %q, want clean", got)
			}
			if got := symbolicRef(t, dir); got != c.branch {
				t.Errorf("HEAD names %q, want %q", got, c.branch)
			}
		})
	}
}

func commitAll(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "first")
}

// symbolicRef returns the branch HEAD names in dir, "" if detached.
func symbolicRef(t *testing.T, dir string) string {
	cmd := exec.Command("git", "symbolic-ref", "-q", "HEAD")
	cmd.Dir, cmd.Env = dir, gitEnv(t, dir)
	out, _ := cmd.Output()
	return string(out)
}

// TestNodeDiffAfterLosingAConflict: two nodes change the same file, whose
// base is an uncommitted change in the root; the second loses, keeps its
// change, and after the next seed git diff still shows its change against
// its base, whose blob only its own object store held.
func TestNodeDiffAfterLosingAConflict(t *testing.T) {
	t.Parallel()
	e := repoEnv(t) // b.txt is "uncommitted\n" in the root, "b\n" in HEAD
	e.prepare("left")
	right := e.prepare("right")
	e.write("left", "b.txt", "left\n")
	e.write("right", "b.txt", "right\n")
	rep := e.publish("left", "right")
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Loser != "right" {
		t.Fatalf("conflicts = %+v, want right to lose b.txt", rep.Conflicts)
	}
	e.m.BeginIteration()
	e.prepare("right")
	want := "@@ -1 +1 @@\n-uncommitted\n+right\n"
	if got := runIn(t, right, nil, "git", "diff", "--no-color", "--format=", "-U0", "b.txt"); !strings.Contains(got, want) {
		t.Errorf("git diff in right =\n%s\nwant it to hold\n%s", got, want)
	}
	runIn(t, right, nil, "git", "fsck", "--no-dangling")
}

// TestNestedGitIsStillRefused: in a worktree that is a repository, only
// the .git at its top is the node's; a .git anywhere below is refused as
// before, and nothing of it is published.
func TestNestedGitIsStillRefused(t *testing.T) {
	t.Parallel()
	e := repoEnv(t)
	e.prepare("coder")
	e.write("coder", "d/.git/config", "[core]\n\tfsmonitor = evil\n")
	e.write("coder", ".git/hooks/pre-commit", "#!/bin/sh\n")
	rep := e.publish("coder")
	if want := []Refusal{{Node: "coder", Path: "d/.git", Reason: ReasonGit}}; len(rep.Refused) != 1 || rep.Refused[0] != want[0] {
		t.Errorf("refused = %+v, want %+v", rep.Refused, want)
	}
	if got := readFile(t, e.root, "d/.git"); got != "<none>" {
		t.Errorf("d/.git in the root = %q, want none", got)
	}
	if _, err := os.Stat(filepath.Join(e.root, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the node's hook reached the root's .git")
	}
}

// TestRootHeadMovesBetweenRuns: a commit made in the root between two
// runs becomes the parent of the node's next base.
func TestRootHeadMovesBetweenRuns(t *testing.T) {
	t.Parallel()
	e := repoEnv(t)
	dir := e.prepare("coder")
	git(t, e.root, "commit", "-qam", "third")
	e.m.BeginIteration()
	e.prepare("coder")
	if got, want := runIn(t, dir, nil, "git", "log", "--format=%s"), "loop: base of node coder\nthird\nsecond\nfirst\n"; got != want {
		t.Errorf("git log = %q, want %q", got, want)
	}
	if got := runIn(t, dir, nil, "git", "status", "--porcelain"); got != "" {
		t.Errorf("git status = %q", got)
	}
}
