package delivery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// TestCommitSnapshotMatchesCheckout: the snapshot of a commit is the
// workspace snapshot of a fresh checkout of it, with the root's
// info/exclude, whatever the commit holds: ignored files tracked, nested
// .gitignore files, symbolic links, exec bits, a committed .loop. The
// root is a depth-1 clone.
func TestCommitSnapshotMatchesCheckout(t *testing.T) {
	commits := []struct {
		name    string
		fs      files
		force   []string
		exclude string
	}{
		{name: "the project", fs: project, force: []string{"tracked.log"}},
		{name: "nested ignores", fs: files{
			".gitignore": "*.tmp\n!keep.tmp\n", "a.tmp": "i\n", "keep.tmp": "k\n",
			"sub/.gitignore": "!*.tmp\nlocal/\n", "sub/b.tmp": "re-included\n", "sub/local/x": "ignored\n",
			"run.sh": "x:#!/bin/sh\n", "bin/tool": "x:t\n", "to-run": "->run.sh", ".loop/x": "committed\n",
		}, force: []string{"a.tmp", "sub/local/x"}},
		{name: "info exclude", fs: files{"a.md": "a\n", "b.txt": "b\n", "d/c.md": "c\n"}, exclude: "*.md\n"},
	}
	for _, tc := range commits {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bare, head := origin(t, tc.fs, tc.force...)
			root := clone(t, "file://"+bare)
			writeExclude(t, root, tc.exclude)
			before := objectCount(t, filepath.Join(root, ".git"))
			got, err := CommitSnapshot(root, head)
			if err != nil {
				t.Fatal(err)
			}
			co := filepath.Join(t.TempDir(), "co")
			gitfake.Git(t, "", "clone", "-q", "file://"+bare, co)
			writeExclude(t, co, tc.exclude)
			want, err := workspace.NewHasher(co).Snapshot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("CommitSnapshot = %s, a checkout's snapshot is %s", got, want)
			}
			if after := objectCount(t, filepath.Join(root, ".git")); after != before {
				t.Errorf("CommitSnapshot wrote %d objects into the root's repository", after-before)
			}
		})
	}
	if _, err := CommitSnapshot(t.TempDir(), strings.Repeat("a", 40)); err == nil {
		t.Error("CommitSnapshot outside a repository: no error")
	}
}

func writeExclude(t *testing.T, root, rules string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckoutChangesNamesEachPath: CheckoutChanges names the files the
// root adds, changes and deletes against a checkout of a commit, in a
// directory whose name holds a control character too, and the commit
// the root's repository has checked out.
func TestCheckoutChangesNamesEachPath(t *testing.T) {
	t.Parallel()
	bare, head := origin(t, files{"a.txt": "a\n", "tab\tdir/f": "f\n", "gone": "x\n", "run.sh": "echo\n"})
	root := clone(t, "file://"+bare)
	write(t, root, files{"a.txt": "changed\n", "tab\tdir/new": "new\n"})
	remove("gone")(t, root)
	chmod("run.sh", 0o755)(t, root)
	got, err := CheckoutChanges(t.Context(), root, head, workspace.Checkout{})
	if err != nil {
		t.Fatal(err)
	}
	want := Checkout{Head: head, Changes: []Change{
		{Path: "a.txt", Kind: Modified}, {Path: "gone", Kind: Deleted},
		{Path: "run.sh", Kind: Modified}, {Path: "tab\tdir/new", Kind: Added},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckoutChanges (-want +got):\n%s", diff)
	}
}
