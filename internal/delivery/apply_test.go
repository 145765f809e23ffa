package delivery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// runWorkspace is a run's workspace: a checkout of the base the agent
// changed, stored as a state branch stores it.
func runWorkspace(t *testing.T, bare string, change func(*testing.T, string)) (string, *memory.Storage) {
	t.Helper()
	ws := clone(t, "file://"+bare)
	change(t, ws)
	st := memory.NewStorage()
	snap, err := workspace.NewHasher(ws).WriteObjects(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	return string(snap), st
}

// agentWork is everything an agent might change.
var agentWork = both(
	edit1("calc.sh", "echo $(($1 + $2))\n"), edit1("new/file.txt", "new\n"), remove("README.md"),
	chmod("test.sh", 0o644), edit1("link", "->calc.sh"), remove("docs"), edit1("docs", "a file now\n"),
	edit1(".loop/state/x", "never applied\n"), edit1("x.log", "ignored\n"),
)

func TestApply(t *testing.T) {
	bare, head := origin(t, project, "tracked.log")
	snap, st := runWorkspace(t, bare, agentWork)
	cases := []struct {
		name    string
		local   func(*testing.T, string) // the person's own changes before apply
		changes []Change
		edited  []string // refused: these paths have local edits
	}{
		{name: "a clean checkout", local: func(*testing.T, string) {}, changes: []Change{
			{"README.md", Deleted}, {"calc.sh", Modified}, {"docs", Type}, {"docs/guide.md", Deleted},
			{"link", Modified}, {"new/file.txt", Added}, {"test.sh", Mode}}},
		{name: "local edits elsewhere are kept", local: edit1("docs-old.md", "mine\n"), changes: []Change{
			{"README.md", Deleted}, {"calc.sh", Modified}, {"docs", Type}, {"docs/guide.md", Deleted},
			{"link", Modified}, {"new/file.txt", Added}, {"test.sh", Mode}}},
		{name: "part of it applied already", local: edit1("calc.sh", "echo $(($1 + $2))\n"), changes: []Change{
			{"README.md", Deleted}, {"docs", Type}, {"docs/guide.md", Deleted},
			{"link", Modified}, {"new/file.txt", Added}, {"test.sh", Mode}}},
		{name: "a local edit to a changed file", local: both(edit1("calc.sh", "echo mine\n"), chmod("README.md", 0o755)),
			edited: []string{"README.md", "calc.sh"}},
		{name: "an untracked file where the run adds one", local: edit1("new/file.txt", "mine\n"), edited: []string{"new/file.txt"}},
		{name: "an untracked file where a file replaces a directory", local: edit1("docs/notes.md", "mine\n"), edited: []string{"docs"}},
		{name: "a symbolic link where the run writes below", local: both(remove("new"), edit1("new", "->"+t.TempDir())),
			edited: []string{"new/file.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := clone(t, "file://"+bare)
			tc.local(t, root)
			before := snapshot(t, root)
			got, err := Apply(context.Background(), Local{Root: root, Base: head, Snapshot: snap, Objects: st})
			var le *LocalEditsError
			if tc.edited != nil {
				if !errors.As(err, &le) {
					t.Fatalf("Apply: %v; want local edits", err)
				}
				if diff := cmp.Diff(tc.edited, le.Paths); diff != "" {
					t.Errorf("paths with local edits (-want +got):\n%s", diff)
				}
				if after := snapshot(t, root); after != before {
					t.Error("a refused Apply changed the checkout")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.changes, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			want := snap
			if tc.name == "local edits elsewhere are kept" {
				want = snapshotWith(t, bare, both(agentWork, edit1("docs-old.md", "mine\n")))
			}
			if after := snapshot(t, root); after != want {
				t.Errorf("after Apply the checkout is at %s, want %s; status:\n%s", after, want, gitfake.Git(t, root, "status", "--short"))
			}
			if again, err := Apply(context.Background(), Local{Root: root, Base: head, Snapshot: snap, Objects: st}); err != nil || len(again) > 0 {
				t.Errorf("a second Apply = %v, %v; want nothing to do", again, err)
			}
			if _, err := os.Lstat(filepath.Join(root, ".loop", "state", "x")); err == nil {
				t.Error("Apply wrote into .loop")
			}
		})
	}
}

// TestApplyHostileWorkspace: a workspace read from a state branch is
// written by whoever may push. Entries that would land in .git or .loop
// are never written; names and modes no checkout has fail the whole
// apply, before anything is written.
func TestApplyHostileWorkspace(t *testing.T) {
	bare, head := origin(t, project)
	cases := []struct {
		name  string
		extra []object.TreeEntry // added to the top of a workspace the agent fixed calc.sh in (see craft)
		want  string             // the error; "" when Apply succeeds
	}{
		{name: "into .git", extra: []object.TreeEntry{{Name: ".git", Mode: filemode.Dir}, {Name: ".GIT", Mode: filemode.Dir}}},
		{name: "into .loop", extra: []object.TreeEntry{{Name: ".loop", Mode: filemode.Dir}}},
		{name: "into .loop as a case-folding disk spells it", extra: []object.TreeEntry{{Name: ".LOOP", Mode: filemode.Dir}, {Name: ".Loop.", Mode: filemode.Dir}}},
		{name: "a dot-dot name", extra: []object.TreeEntry{{Name: "..", Mode: filemode.Regular}}, want: `an entry named ".."`},
		{name: "a slash in a name", extra: []object.TreeEntry{{Name: "a/../../b", Mode: filemode.Regular}}, want: "which no checkout holds"},
		{name: "a submodule", extra: []object.TreeEntry{{Name: "sub", Mode: filemode.Submodule, Hash: plumbing.NewHash(head)}}, want: "with mode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, st := runWorkspace(t, bare, edit1("calc.sh", "echo $(($1 + $2))\n"))
			top := craft(t, st, plumbing.NewHash(snap), tc.extra)
			root := clone(t, "file://"+bare)
			gitBefore := snapshotOf(t, filepath.Join(root, ".git"))
			before := snapshot(t, root)
			got, err := Apply(context.Background(), Local{Root: root, Base: head, Snapshot: top.String(), Objects: st})
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "" && !cmp.Equal([]Change{{"calc.sh", Modified}}, got):
				t.Errorf("changes = %v, want calc.sh only", got)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Apply: %v, want an error saying %q", err, tc.want)
			case tc.want != "" && snapshot(t, root) != before:
				t.Error("a refused Apply changed the checkout")
			}
			if snapshotOf(t, filepath.Join(root, ".git")) != gitBefore {
				t.Error("Apply changed .git")
			}
			for _, p := range []string{".loop/config", ".GIT/config", ".LOOP/config", ".Loop./config"} {
				if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
					t.Errorf("Apply wrote %s", p)
				}
			}
		})
	}
}

// craft stores a tree holding top's entries and extra, where a directory
// without a hash holds a git config that would run a hook, and a file
// without one a line of text.
func craft(t *testing.T, st *memory.Storage, top plumbing.Hash, extra []object.TreeEntry) plumbing.Hash {
	t.Helper()
	tr, err := object.GetTree(st, top)
	if err != nil {
		t.Fatal(err)
	}
	es := append(tr.Entries, extra...)
	for i, e := range es {
		switch {
		case e.Mode == filemode.Dir && e.Hash.IsZero():
			config := mustBlob(t, st, "[core]\n\thooksPath = /tmp/pwned\n")
			es[i].Hash = mustPut(t, st, []object.TreeEntry{{Name: "config", Mode: filemode.Regular, Hash: config}})
		case e.Mode == filemode.Regular && e.Hash.IsZero():
			es[i].Hash = mustBlob(t, st, "crafted\n")
		}
	}
	return mustPut(t, st, es)
}

func mustPut(t *testing.T, st *memory.Storage, es []object.TreeEntry) plumbing.Hash {
	t.Helper()
	h, err := putTree(st, es)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustBlob(t *testing.T, st *memory.Storage, data string) plumbing.Hash {
	t.Helper()
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// snapshot is the workspace snapshot of root.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	s, err := workspace.NewHasher(root).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// snapshotOf hashes a directory whole, .git rules aside: what a hostile
// apply must leave alone.
func snapshotOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p + "\x00" + string(data) + "\x00")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// snapshotWith is the snapshot of a checkout of the base after change.
func snapshotWith(t *testing.T, bare string, change func(*testing.T, string)) string {
	t.Helper()
	root := clone(t, "file://"+bare)
	change(t, root)
	return snapshot(t, root)
}
