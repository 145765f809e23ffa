package workspace

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestShort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"4b825dc642cb6eb9a060e54bf8d69288fbee4904", "4b825dc"},
		{"4b825dc", "4b825dc"},
		{"abc", "abc"},
		{"", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Snapshot(tc.in).Short()); diff != "" {
				t.Errorf("Short() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSnapshotMissingRoot(t *testing.T) {
	h := NewHasher(filepath.Join(t.TempDir(), "missing"))
	if _, err := h.Snapshot(t.Context()); err == nil {
		t.Error("Snapshot() of a missing root succeeded")
	}
	if _, err := h.Files(t.Context()); err == nil {
		t.Error("Files() of a missing root succeeded")
	}
}

// mustSnapshot returns h.Snapshot(t.Context()) or fails the test.
func mustSnapshot(t *testing.T, h *Hasher) Snapshot {
	t.Helper()
	s, err := h.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func chtimes(t *testing.T, p string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// at returns the OS path of the slash-separated rel under root.
func at(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

func chmod(rel string, mode os.FileMode) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		if err := os.Chmod(at(root, rel), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(rel string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		if err := os.Remove(at(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

// changeCases mutate a tree built from changeBase.
var (
	changeBase = []op{
		file("a.txt", "hello\n"), file("dir/b.txt", "b\n"), file(".gitignore", "*.log\n"),
	}
	changeCases = []struct {
		name    string
		mutate  func(t *testing.T, root string)
		changed bool
	}{
		{"one byte of one file", file("dir/b.txt", "c\n"), true},
		{"mtime only", func(t *testing.T, root string) {
			chtimes(t, at(root, "a.txt"), time.Now().Add(-time.Hour))
		}, false},
		{"chmod +x", chmod("a.txt", 0o755), true},
		{"chmod g+x (git only looks at the owner bit)", chmod("a.txt", 0o654), false},
		{"ignored file added", file("dir/x.log", "x\n"), false},
		{"file under .loop added", file(".loop/s", "s\n"), false},
		{"empty dir added", dir("dir/empty"), false},
		{"file added", file("new", ""), true},
		{"file removed", remove("dir/b.txt"), true},
		{"file replaced by a symlink", func(t *testing.T, root string) {
			remove("a.txt")(t, root)
			link("a.txt", "hello\n")(t, root)
		}, true},
	}
)

func TestSnapshotChanges(t *testing.T) {
	for _, tc := range changeCases {
		t.Run(tc.name, func(t *testing.T) {
			root := build(t, changeBase...)
			h := NewHasher(root)
			before := mustSnapshot(t, h)
			tc.mutate(t, root)
			after := mustSnapshot(t, h)
			if changed := after != before; changed != tc.changed {
				t.Errorf("snapshot changed = %v, want %v (%s -> %s)", changed, tc.changed, before.Short(), after.Short())
			}
			want, _ := oracle(t, root)
			if diff := cmp.Diff(Snapshot(want), after); diff != "" {
				t.Errorf("Snapshot() after change mismatch (-git +ours):\n%s", diff)
			}
		})
	}
}

func TestSnapshotDetectsSameSizeRewriteInSameSecond(t *testing.T) {
	root := build(t, file("f", "aaaa"), file("g", "g"))
	p := filepath.Join(root, "f")
	mtime := time.Now().Truncate(time.Second)
	chtimes(t, p, mtime)
	h := NewHasher(root)
	before := mustSnapshot(t, h)

	file("f", "bbbb")(t, root)
	chtimes(t, p, mtime) // same size, same mtime, same inode
	after := mustSnapshot(t, h)

	if after == before {
		t.Fatalf("same-size rewrite within the same second not detected: %s", after)
	}
	if diff := cmp.Diff(mustSnapshot(t, NewHasher(root)), after); diff != "" {
		t.Errorf("cached snapshot differs from a fresh one (-fresh +cached):\n%s", diff)
	}
}

func TestSnapshotCache(t *testing.T) {
	root := build(t, file("old1", "1"), file("d/old2", "2"), file("recent", "r"))
	clock := time.Now() // every snapshot starts now: files written from here on stay racy
	chtimes(t, filepath.Join(root, "old1"), clock.Add(-time.Hour))
	chtimes(t, filepath.Join(root, "d", "old2"), clock.Add(-time.Hour))
	chtimes(t, filepath.Join(root, "recent"), clock)
	h := NewHasher(root)
	h.now = func() time.Time { return clock }
	steps := []struct {
		name      string
		mutate    func(t *testing.T)
		wantReads int64
	}{
		{"cold cache reads everything", func(*testing.T) {}, 3},
		{"racily clean file is read again", func(*testing.T) {}, 1},
		{"rewritten file is read", func(t *testing.T) { file("d/old2", "3")(t, root) }, 2},
		{"new file is read", func(t *testing.T) { file("new", "n")(t, root) }, 3},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.mutate(t)
			start := h.reads.Load()
			got := mustSnapshot(t, h)
			if diff := cmp.Diff(st.wantReads, h.reads.Load()-start); diff != "" {
				t.Errorf("files read mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(mustSnapshot(t, NewHasher(root)), got); diff != "" {
				t.Errorf("cached snapshot differs from a fresh one (-fresh +cached):\n%s", diff)
			}
		})
	}
}

func TestSnapshotCacheTrustsOldFiles(t *testing.T) {
	root := build(t, file("a", "a"), file("b/c", "c"))
	h := NewHasher(root)
	mustSnapshot(t, h)
	h.now = func() time.Time { return time.Now().Add(time.Hour) } // files now look old
	mustSnapshot(t, h)
	start := h.reads.Load()
	mustSnapshot(t, h)
	if n := h.reads.Load() - start; n != 0 {
		t.Errorf("warm snapshot of an unchanged tree read %d files, want 0", n)
	}
}

func TestStampVouches(t *testing.T) {
	stamp := time.Unix(1_700_000_000, 0)
	key := StatKey{size: 4, mtime: stamp.Add(-time.Hour).UnixNano(), ctime: 1, dev: 3, ino: 7, mode: 0o644}
	with := func(f func(*StatKey)) StatKey { k := key; f(&k); return k }
	for _, tc := range []struct {
		name  string
		entry StatKey // stat when the file was read at stamp
		now   StatKey // stat now
		want  bool
	}{
		{"unchanged old file", key, key, true},
		{"size changed", key, with(func(k *StatKey) { k.size++ }), false},
		{"mtime changed", key, with(func(k *StatKey) { k.mtime++ }), false},
		{"ctime changed", key, with(func(k *StatKey) { k.ctime++ }), false},
		{"device changed", key, with(func(k *StatKey) { k.dev++ }), false},
		{"inode changed", key, with(func(k *StatKey) { k.ino++ }), false},
		{"mode changed", key, with(func(k *StatKey) { k.mode = 0o755 }), false},
		{"mtime in the same second as the read", with(func(k *StatKey) { k.mtime = stamp.UnixNano() }),
			with(func(k *StatKey) { k.mtime = stamp.UnixNano() }), false},
		{"mtime just inside the racy window", with(func(k *StatKey) { k.mtime = stamp.Add(-racyWindow).UnixNano() }),
			with(func(k *StatKey) { k.mtime = stamp.Add(-racyWindow).UnixNano() }), false},
		{"mtime after the read", with(func(k *StatKey) { k.mtime = stamp.Add(time.Hour).UnixNano() }),
			with(func(k *StatKey) { k.mtime = stamp.Add(time.Hour).UnixNano() }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Stamp{Key: tc.entry, At: stamp}).Vouches(tc.now); got != tc.want {
				t.Errorf("Vouches() = %v, want %v", got, tc.want)
			}
		})
	}
	if (Stamp{Key: key}).Vouches(key) {
		t.Error("a zero stamp vouches for a file")
	}
}

func TestSnapshotConcurrent(t *testing.T) {
	root := build(t, oracleCases[len(oracleCases)-1].ops...)
	file("x/y/z", "z\n")(t, root)
	want, wantFiles := oracle(t, root)
	h := NewHasher(root)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				got, err := h.Snapshot(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				if got != Snapshot(want) {
					t.Errorf("Snapshot() = %s, want %s", got, want)
				}
				files, err := h.Files(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				if diff := cmp.Diff(wantFiles, files); diff != "" {
					t.Errorf("Files() mismatch (-git +ours):\n%s", diff)
				}
			}
		})
	}
	wg.Wait()
}
