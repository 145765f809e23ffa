package delivery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/secret"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// project is the repository the delivery tests start from.
var project = files{
	"calc.sh":                  "echo $(($1 - $2))\n",
	"test.sh":                  "x:test \"$(sh calc.sh 2 3)\" = 5\n",
	"README.md":                "# calc\n",
	".gitignore":               "*.log\nbuild/\n",
	".github/workflows/ci.yml": "on: push\n",
	"docs/guide.md":            "guide\n",
	"docs-old.md":              "sorts before docs/ in a tree\n",
	"tracked.log":              "tracked although ignored\n",
	".loop/committed":          "someone committed .loop\n",
	"link":                     "->README.md",
}

// identity signs the test deliveries.
var identity = Identity{Name: "loop-action[bot]", Email: "bot@example.com"}

// spec is a delivery of root on base with the test identity.
func spec(root, base string) Spec {
	return Spec{
		Root: root, Base: base, Author: identity, When: time.Unix(1700000000, 0).UTC(),
		Message: "loop: fix calc\n\nLoop-Run: calc/pr-1\n",
	}
}

// workflows excludes what the action keeps out unless allowed.
func workflows(rel string) bool { return strings.HasPrefix(rel, ".github/workflows/") }

func TestBuild(t *testing.T) {
	cases := []struct {
		name      string
		change    func(t *testing.T, root string)
		exclude   func(string) bool
		changes   []Change
		excluded  []Change
		unchanged bool // the delivered tree is the base's
	}{
		{name: "one file fixed", change: edit1("calc.sh", "echo $(($1 + $2))\n"),
			changes: []Change{{"calc.sh", Modified}}},
		{name: "added and deleted", change: both(edit1("new.txt", "new\n"), remove("README.md")),
			changes: []Change{{"README.md", Deleted}, {"new.txt", Added}}},
		{name: "mode only", change: chmod("calc.sh", 0o755), changes: []Change{{"calc.sh", Mode}}},
		{name: "file becomes a link", change: edit1("docs/guide.md", "->../README.md"),
			changes: []Change{{"docs/guide.md", Type}}},
		{name: "file becomes a directory", change: both(remove("calc.sh"), edit1("calc.sh/inner", "i\n")),
			changes: []Change{{"calc.sh", Deleted}, {"calc.sh/inner", Added}}},
		{name: "directory becomes a file", change: both(remove("docs"), edit1("docs", "now a file\n")),
			changes: []Change{{"docs", Type}, {"docs/guide.md", Deleted}}},
		{name: "ignored, loop and tracked-ignored files stay out", change: both(
			edit1("x.log", "ignored\n"), edit1("build/out", "ignored\n"), edit1(".loop/state/y", "state\n"),
			edit1(".loop/committed", "changed by an agent\n"), remove("tracked.log")),
			unchanged: true},
		{name: "workflows excluded", exclude: workflows,
			change:   both(edit1(".github/workflows/ci.yml", "on: [push, pull_request]\n"), edit1("calc.sh", "echo $(($1 + $2))\n"), edit1(".github/workflows/new.yml", "on: push\n")),
			changes:  []Change{{"calc.sh", Modified}},
			excluded: []Change{{".github/workflows/ci.yml", Modified}, {".github/workflows/new.yml", Added}}},
		{name: "a kept file keeps its directory", exclude: func(rel string) bool { return rel == "docs/guide.md" },
			change:   both(remove("docs"), edit1("docs", "a file where the kept one's directory is\n")),
			excluded: []Change{{"docs", Type}, {"docs/guide.md", Deleted}}, unchanged: true},
		{name: "a kept file keeps its place", exclude: func(rel string) bool { return rel == "calc.sh" },
			change:   both(remove("calc.sh"), edit1("calc.sh/inner", "i\n")),
			excluded: []Change{{"calc.sh", Deleted}, {"calc.sh/inner", Added}}, unchanged: true},
		{name: "every spelling of .git stays out", change: both(
			edit1(".GIT/config", "[core]\n\thooksPath = /tmp\n"), edit1("sub/.Git/hooks/post-checkout", "x:rm -rf ~\n"),
			edit1("x/git~1/config", "c\n"), edit1("y/.git. /config", "c\n")),
			excluded:  []Change{{".GIT/config", Added}, {"sub/.Git/hooks/post-checkout", Added}, {"x/git~1/config", Added}, {"y/.git. /config", Added}},
			unchanged: true},
		{name: "nothing changed", change: func(*testing.T, string) {}, unchanged: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bare, head := origin(t, project, "tracked.log")
			root := clone(t, "file://"+bare)
			tc.change(t, root)
			s := spec(root, head)
			s.Exclude = tc.exclude
			d, err := Build(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.changes, d.Changes); diff != "" {
				t.Errorf("Changes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.excluded, d.Excluded); diff != "" {
				t.Errorf("Excluded (-want +got):\n%s", diff)
			}
			baseTree := strings.TrimSpace(gitfake.Git(t, root, "rev-parse", head+"^{tree}"))
			if got := d.Tree == baseTree; got != tc.unchanged {
				t.Errorf("delivered tree %s, base tree %s: unchanged = %v, want %v", d.Tree, baseTree, got, tc.unchanged)
			}
			if len(tc.excluded) == 0 {
				want, err := workspace.NewHasher(root).Snapshot(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if d.Snapshot != string(want) {
					t.Errorf("Snapshot = %s, want the root's %s", d.Snapshot, want)
				}
			}
			checkPushed(t, d, bare, head)
		})
	}
}

// checkPushed pushes d over file:// onto a new branch and checks the
// commit the remote holds: its parent, identity and message, that its
// checkout has d.Snapshot, and that the remote is sound.
func checkPushed(t *testing.T, d *Delivery, bare, head string) {
	t.Helper()
	if err := d.Push(context.Background(), Remote{URL: "file://" + bare}, "refs/heads/pr", ""); err != nil {
		t.Fatal(err)
	}
	gitfake.Fsck(t, bare)
	got := gitfake.Git(t, "", "--git-dir="+bare, "log", "-1", "--format=%H %P%n%an <%ae>%n%cn <%ce>%n%ct%n%B", "pr")
	want := d.SHA + " " + head + "\nloop-action[bot] <bot@example.com>\nloop-action[bot] <bot@example.com>\n1700000000\n" +
		"loop: fix calc\n\nLoop-Run: calc/pr-1\n\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the pushed commit (-want +got):\n%s", diff)
	}
	co := filepath.Join(t.TempDir(), "co")
	gitfake.Git(t, "", "clone", "-q", "--branch=pr", "file://"+bare, co)
	snap, err := workspace.NewHasher(co).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if string(snap) != d.Snapshot {
		t.Errorf("a checkout of the delivered commit has snapshot %s, Snapshot says %s", snap, d.Snapshot)
	}
}

func TestBuildRefuses(t *testing.T) {
	bare, head := origin(t, project)
	root := clone(t, "file://"+bare)
	edit1("calc.sh", "echo $(($1 + $2))\n")(t, root)
	certified, err := workspace.NewHasher(root).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const value = "sk-live-0123456789abcdef"
	cases := []struct {
		name   string
		change func(t *testing.T, root string)
		spec   func(s *Spec)
		is     error
		want   string
	}{
		{name: "the root moved since certification", change: edit1("calc.sh", "echo 5\n"),
			spec: func(s *Spec) { s.Snapshot = string(certified) }, is: ErrRootMoved, want: "not " + certified.Short()},
		{name: "a provider secret in a file", change: edit1("notes/leak.txt", "key="+value+"\n"),
			spec: func(s *Spec) { s.Secrets = []secret.Secret{{Name: "API_KEY", Forms: []string{value}}} },
			is:   secret.ErrHeld, want: `"notes/leak.txt" holds the value of the provider variable "API_KEY"`},
		{name: "a tracked file made ignored", change: edit1(".gitignore", "calc.sh\n"), spec: func(*Spec) {},
			is: ErrHidden, want: `"calc.sh" is in the loop root but ignored`},
		{name: "a base that is not there", spec: func(s *Spec) { s.Base = strings.Repeat("ab", 20) }, want: "is not in the repository"},
		{name: "a short base", spec: func(s *Spec) { s.Base = head[:7] }, want: "not a full commit id"},
		{name: "no message", spec: func(s *Spec) { s.Message = " \n" }, want: "no commit message"},
		{name: "an identity that forges a header", spec: func(s *Spec) { s.Author.Email = "a@b>\ncommitter x" }, want: "want a name and an email"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := clone(t, "file://"+bare)
			edit1("calc.sh", "echo $(($1 + $2))\n")(t, root)
			if tc.change != nil {
				tc.change(t, root)
			}
			s := spec(root, head)
			tc.spec(&s)
			before := gitfake.Git(t, root, "status", "--porcelain", "--ignored")
			_, err := Build(context.Background(), s)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("Build: %v; want an error wrapping %v that says %q", err, tc.is, tc.want)
			}
			if strings.Contains(err.Error(), value) {
				t.Errorf("the error holds the secret: %v", err)
			}
			if se := (*secret.HeldError)(nil); errors.As(err, &se) != (tc.is == secret.ErrHeld) || (se != nil && *se != (secret.HeldError{Path: "notes/leak.txt", Variable: "API_KEY"})) {
				t.Errorf("Build: %v; a *secret.HeldError (naming the path and the variable) exactly when a secret is found: %+v", err, se)
			}
			if after := gitfake.Git(t, root, "status", "--porcelain", "--ignored"); after != before {
				t.Errorf("Build changed the root:\n%s\nnow:\n%s", before, after)
			}
		})
	}
}

func edit1(rel, body string) func(*testing.T, string) {
	return func(t *testing.T, root string) { write(t, root, files{rel: body}) }
}

func remove(rel string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
}

func chmod(rel string, mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(rel)), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func both(fs ...func(*testing.T, string)) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		for _, f := range fs {
			f(t, root)
		}
	}
}

// TestBuildSnapshotSaysWhenItDiffers: when the root's ignore rules show a
// file the base tracks but hid, which the root no longer has, the
// delivered commit keeps it, and Snapshot says the commit is not the
// certified snapshot, so that nothing certifies it.
func TestBuildSnapshotSaysWhenItDiffers(t *testing.T) {
	bare, head := origin(t, project, "tracked.log")
	root := clone(t, "file://"+bare)
	both(edit1(".gitignore", "build/\n"), remove("tracked.log"))(t, root)
	d, err := Build(context.Background(), spec(root, head))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Change{{".gitignore", Modified}}, d.Changes); diff != "" {
		t.Errorf("Changes (-want +got):\n%s", diff)
	}
	rootSnap := snapshot(t, root)
	if d.Snapshot == rootSnap {
		t.Errorf("Snapshot = the root's %s, though the commit keeps tracked.log", rootSnap)
	}
	checkPushed(t, d, bare, head)
}
