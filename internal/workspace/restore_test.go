package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

// TestRestoreRoundTrip restores every oracle tree into an empty directory:
// the result has the same snapshot and the same files, byte for byte.
func TestRestoreRoundTrip(t *testing.T) {
	for _, tc := range oracleCases {
		t.Run(tc.name, func(t *testing.T) {
			src := build(t, tc.ops...)
			s := memory.NewStorage()
			snap, err := NewHasher(src).WriteObjects(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			dst := t.TempDir()
			if _, err := Restore(t.Context(), dst, s, snap); err != nil {
				t.Fatal(err)
			}
			if got := mustSnapshot(t, NewHasher(dst)); got != snap {
				t.Errorf("snapshot of the restored root = %s, want %s", got, snap)
			}
			files, err := NewHasher(src).Files(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want, got := listTree(t, src), listTree(t, dst)
			for _, f := range files {
				f = filepath.FromSlash(f)
				if diff := cmp.Diff(want[f], got[f]); diff != "" {
					t.Errorf("%s (-source +restored):\n%s", f, diff)
				}
			}
			again, err := Restore(t.Context(), dst, s, snap)
			if err != nil || again != 0 {
				t.Errorf("restoring again changed %d paths (%v), want 0", again, err)
			}
		})
	}
}

// TestRestoreOverWork restores a tree over a root that has moved on: every
// kind of difference is undone, and ignored files, .git and .loop stay.
func TestRestoreOverWork(t *testing.T) {
	src := build(t,
		file(".gitignore", "*.log\nbuild/\n"), file("same", "same\n"), file("edit", "old\n"),
		fileMode("run.sh", "#!/bin/sh\n", 0o755), file("mode", "m\n"), link("link", "same"),
		file("was-file/x", "x\n"), file("was-dir", "d\n"), file("was-link", "l\n"),
		file("deep/a/b/c", "c\n"), link("relink", "edit"),
	)
	s := memory.NewStorage()
	snap, err := NewHasher(src).WriteObjects(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	dst := build(t,
		file(".gitignore", "*.log\nbuild/\n"), file("same", "same\n"), file("edit", "new\n"),
		file("run.sh", "#!/bin/sh\n"), fileMode("mode", "m\n", 0o755), link("link", "same"),
		file("was-file", "now a file\n"), file("was-dir/y", "y\n"), link("was-link", "elsewhere"),
		file("added", "a\n"), file("deep/a/b/added", "a\n"), file("gone/sub/z", "z\n"),
		file("relink", "edit"),
		file("keep.log", "ignored\n"), file("build/out", "ignored\n"), file("gone/keep.log", "ignored\n"),
		file(".git/HEAD", "ref: refs/heads/main\n"), file(".loop/state/x", "state\n"),
		file("sub/.git/config", "nested\n"),
	)
	before, err := os.Lstat(filepath.Join(dst, "same"))
	if err != nil {
		t.Fatal(err)
	}
	changed, err := Restore(t.Context(), dst, s, snap)
	if err != nil {
		t.Fatal(err)
	}
	// edit, run.sh (mode), mode (mode), was-file (file removed, x written),
	// was-dir (replaced by a file), was-link, added, deep/a/b/added,
	// deep/a/b/c, gone/sub/z, relink. sub holds only .git: it stays.
	if changed != 12 {
		t.Errorf("Restore changed %d paths, want 12", changed)
	}
	if got := mustSnapshot(t, NewHasher(dst)); got != snap {
		t.Errorf("snapshot after Restore = %s, want %s", got, snap)
	}
	for _, p := range []string{"keep.log", "build/out", "gone/keep.log", ".git/HEAD", ".loop/state/x", "sub/.git/config"} {
		if _, err := os.Lstat(at(dst, p)); err != nil {
			t.Errorf("%s: %v; Restore must leave it", p, err)
		}
	}
	if _, err := os.Lstat(at(dst, "gone/sub")); !os.IsNotExist(err) {
		t.Errorf("gone/sub: %v; an emptied directory should go", err)
	}
	if after, err := os.Lstat(filepath.Join(dst, "same")); err != nil || !os.SameFile(before, after) {
		t.Errorf("an unchanged file was rewritten (%v)", err)
	}
}

// TestRestoreRefusesEscapes: a tree naming .git, .loop or a path with a
// slash is refused before anything is written under its name.
func TestRestoreRefusesEscapes(t *testing.T) {
	for _, name := range []string{".git", ".GIT", ".loop", ".LOOP", ".Loop.", "LOOP~1", "..", "a/b"} {
		t.Run(name, func(t *testing.T) {
			s := memory.NewStorage()
			blob := storeObject(t, s, plumbing.BlobObject, []byte("x\n"))
			tree := &object.Tree{Entries: []object.TreeEntry{{Name: name, Mode: filemode.Regular, Hash: blob}}}
			obj := s.NewEncodedObject()
			if err := tree.Encode(obj); err != nil {
				t.Fatal(err)
			}
			id, err := s.SetEncodedObject(obj)
			if err != nil {
				t.Fatal(err)
			}
			dst := t.TempDir()
			if _, err := Restore(t.Context(), dst, s, Snapshot(id.String())); err == nil {
				t.Errorf("Restore of a tree naming %q succeeded", name)
			}
			if entries, _ := os.ReadDir(dst); len(entries) != 0 {
				t.Errorf("Restore wrote %v", entries)
			}
		})
	}
}

func storeObject(t *testing.T, s *memory.Storage, kind plumbing.ObjectType, data []byte) plumbing.Hash {
	t.Helper()
	obj := s.NewEncodedObject()
	obj.SetType(kind)
	w, _ := obj.Writer()
	w.Write(data)
	w.Close()
	id, err := s.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestRestoreErrors(t *testing.T) {
	s := memory.NewStorage()
	if _, err := Restore(t.Context(), t.TempDir(), s, "nonsense"); err == nil {
		t.Error("Restore of a malformed snapshot succeeded")
	}
	if _, err := Restore(t.Context(), t.TempDir(), s, "4b825dc642cb6eb9a060e54bf8d69288fbee4904"); err == nil {
		t.Error("Restore of a tree missing from the store succeeded")
	}
}

// swappingStore is a store that runs swap (once) when Restore asks it for
// the size of the object at: an agent acting between Restore's lstat of a
// file and what Restore then does with it.
type swappingStore struct {
	*memory.Storage
	at   plumbing.Hash
	swap func()
}

func (s *swappingStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if s.swap != nil && h == s.at {
		s.swap()
		s.swap = nil
	}
	return s.Storage.EncodedObjectSize(h)
}

// TestRestoreNeverWritesThroughALink: a directory of the tree that is a
// link in the root (out of it, or into .git), or a file that becomes a
// link to a git hook while Restore compares it, is replaced: nothing is
// written, and no mode changed, where the link leads.
func TestRestoreNeverWritesThroughALink(t *testing.T) {
	t.Parallel()
	src := build(t, file("d/f", "tree\n"), fileMode("x", "hook\n", 0o755))
	s := memory.NewStorage()
	snap, err := NewHasher(src).WriteObjects(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		root func(outside string) []op
		swap func(t *testing.T, root string)
	}{
		{"a directory is a link out of the root", func(outside string) []op {
			return []op{link("d", outside), fileMode("x", "hook\n", 0o755)}
		}, nil},
		{"a directory is a link into .git", func(string) []op {
			return []op{link("d", ".git/hooks"), fileMode("x", "hook\n", 0o755)}
		}, nil},
		{"a file becomes a link to a hook while it is compared", func(string) []op {
			return []op{file("d/f", "tree\n"), file("x", "hook\n")}
		},
			func(t *testing.T, root string) {
				if err := os.Remove(at(root, "x")); err != nil {
					t.Fatal(err)
				}
				link("x", ".git/hooks/pre-commit")(t, root)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			outside := build(t, file("f", "outside\n"))
			root := build(t, append(tt.root(outside), file(".git/hooks/pre-commit", "hook\n"))...)
			hooks, out := tree(t, at(root, ".git")), tree(t, outside)
			store := &swappingStore{Storage: s, at: plumbing.Hash(hashObject("blob", []byte("hook\n")))}
			if tt.swap != nil {
				store.swap = func() { tt.swap(t, root) }
			}
			if _, err := Restore(t.Context(), root, store, snap); err != nil {
				t.Fatal(err)
			}
			if store.swap != nil {
				t.Fatal("Restore never asked for the size of x: nothing was swapped")
			}
			if got := mustSnapshot(t, NewHasher(root)); got != snap {
				t.Errorf("snapshot after Restore = %s, want %s", got, snap)
			}
			if diff := cmp.Diff(hooks, tree(t, at(root, ".git"))); diff != "" {
				t.Errorf(".git changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(out, tree(t, outside)); diff != "" {
				t.Errorf("the outside directory changed (-before +after):\n%s", diff)
			}
		})
	}
}
