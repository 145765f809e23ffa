package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

// TestWriteObjectsMatchesGit stores every oracle tree in a real bare
// repository and lets git check it: the id is git's, and a commit of the
// tree passes `git fsck --strict` (every object present and well formed).
func TestWriteObjectsMatchesGit(t *testing.T) {
	for _, tc := range oracleCases {
		t.Run(tc.name, func(t *testing.T) {
			root := build(t, tc.ops...)
			want, _ := oracle(t, root)
			bare := filepath.Join(t.TempDir(), "objects.git")
			repo, err := git.PlainInit(bare, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewHasher(root).WriteObjects(t.Context(), repo.Storer)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Snapshot(want), got); diff != "" {
				t.Fatalf("WriteObjects(t.Context(), ) mismatch (-git +ours):\n%s", diff)
			}
			fsckTree(t, bare, string(got))
		})
	}
}

// fsckTree commits tree in the bare repository and runs git fsck on it.
func fsckTree(t *testing.T, bare, tree string) {
	t.Helper()
	env := []string{"-c", "user.name=t", "-c", "user.email=t@example.com", "--git-dir=" + bare}
	commit := strings.TrimSpace(runGit(t, "", append(env, "commit-tree", "-m", "check", tree)...))
	runGit(t, "", append(env, "update-ref", "refs/heads/check", commit)...)
	runGit(t, "", append(env, "fsck", "--strict", "--no-dangling")...)
}

// countingStore counts what a store is asked.
type countingStore struct {
	storer.EncodedObjectStorer
	has, set int
}

func (c *countingStore) HasEncodedObject(h plumbing.Hash) error {
	c.has++
	return c.EncodedObjectStorer.HasEncodedObject(h)
}

func (c *countingStore) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	c.set++
	return c.EncodedObjectStorer.SetEncodedObject(o)
}

func TestWriteObjectsWritesOnlyWhatIsMissing(t *testing.T) {
	root := build(t, file("a", "a\n"), file("d/b", "b\n"), file("d/c", "c\n"), file("e/f", "f\n"), link("l", "a"))
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a", "d/b", "d/c", "e/f"} {
		chtimes(t, at(root, p), old)
	}
	h := NewHasher(root)
	s := &countingStore{EncodedObjectStorer: memory.NewStorage()}
	steps := []struct {
		name          string
		mutate        func(t *testing.T)
		set, has, rds int
	}{
		// 4 blobs + the link's + 3 trees; a lookup per object and one per
		// cached file... none are cached yet.
		{"cold", func(*testing.T) {}, 8, 8, 4},
		// Nothing changed: the top tree is there, nothing else is asked.
		{"unchanged", func(*testing.T) {}, 0, 1, 0},
		// d/b changed: its blob, d's tree and the top tree are new; d's
		// other file is looked up, e is found whole.
		{"one file", func(t *testing.T) {
			file("d/b", "B\n")(t, root)
			chtimes(t, at(root, "d/b"), old)
		}, 3, 7, 1},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.mutate(t)
			s.has, s.set = 0, 0
			reads := h.reads.Load()
			got, err := h.WriteObjects(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([3]int{st.set, st.has, st.rds}, [3]int{s.set, s.has, int(h.reads.Load() - reads)}); diff != "" {
				t.Errorf("objects written, lookups, files read (-want +got):\n%s", diff)
			}
			if want := mustSnapshot(t, NewHasher(root)); got != want {
				t.Errorf("WriteObjects(t.Context(), ) = %s, Snapshot() = %s", got, want)
			}
		})
	}
}

// TestWriteObjectsIntoAnotherStore: a warm cache must not let objects be
// skipped when the store is not the one they were written to.
func TestWriteObjectsIntoAnotherStore(t *testing.T) {
	root := build(t, file("a", "a\n"), file("d/b", "b\n"), link("d/l", "../a"), fileMode("x", "#!/bin/sh\n", 0o755))
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a", "d/b", "x"} {
		chtimes(t, at(root, p), old)
	}
	h := NewHasher(root)
	first, err := h.WriteObjects(t.Context(), memory.NewStorage())
	if err != nil {
		t.Fatal(err)
	}
	other := memory.NewStorage()
	second, err := h.WriteObjects(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatalf("snapshots differ: %s, %s", first, second)
	}
	dst := t.TempDir()
	if _, err := Restore(t.Context(), dst, other, second); err != nil {
		t.Fatal(err)
	}
	if got := mustSnapshot(t, NewHasher(dst)); got != second {
		t.Errorf("restored from the second store: %s, want %s", got, second)
	}
}

func TestWriteObjectsEmptyRoot(t *testing.T) {
	s := memory.NewStorage()
	got, err := NewHasher(t.TempDir()).WriteObjects(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	const empty = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	if got != empty {
		t.Errorf("WriteObjects(t.Context(), ) of an empty root = %s, want %s", got, empty)
	}
	if err := s.HasEncodedObject(plumbing.NewHash(empty)); err != nil {
		t.Errorf("the empty tree was not stored: %v", err)
	}
	if _, err := NewHasher(filepath.Join(t.TempDir(), "missing")).WriteObjects(t.Context(), s); err == nil {
		t.Error("WriteObjects(t.Context(), ) of a missing root succeeded")
	}
}

func TestWriteObjectsLeavesRootAlone(t *testing.T) {
	root := build(t, file("a", "a\n"), file(".gitignore", "*.o\n"), file("b.o", "o\n"))
	before := listTree(t, root)
	if _, err := NewHasher(root).WriteObjects(t.Context(), memory.NewStorage()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, listTree(t, root)); diff != "" {
		t.Errorf("the root changed (-before +after):\n%s", diff)
	}
}

// listTree describes every path under root as git records it: kind,
// owner execute bit and content.
func listTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "link " + target
			return err
		case fi.IsDir():
			out[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			kind := "file "
			if fi.Mode()&0o100 != 0 {
				kind = "exec "
			}
			out[rel] = kind + string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
