package state

import (
	"fmt"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

func TestFanPath(t *testing.T) {
	for _, tc := range []struct {
		i    int
		want []string
	}{
		{0, []string{"00", "00"}}, {99, []string{"00", "00"}}, {100, []string{"00", "01"}},
		{9999, []string{"00", "99"}}, {12345, []string{"01", "23"}}, {1234567, []string{"123", "45"}},
	} {
		t.Run(fmt.Sprint(tc.i), func(t *testing.T) {
			if d := cmp.Diff(tc.want, fanPath(tc.i)); d != "" {
				t.Errorf("fanPath(%d) (-want +got):\n%s", tc.i, d)
			}
		})
	}
}

// fanOf stores chunks 0 to n-1 of d (blob i holds "i") fanned out.
func fanOf(t *testing.T, o *objects, d indexed, n int) plumbing.Hash {
	t.Helper()
	h := plumbing.ZeroHash
	for i := range n {
		blob, err := o.putBlob(fmt.Appendf(nil, "%d", i))
		if err == nil {
			h, err = o.fanPut(h, d, i, blob)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// indices lists the numbered files of the directory tree h, in order.
func indices(t *testing.T, o *objects, d indexed, h plumbing.Hash) []int {
	t.Helper()
	out := []int{}
	err := o.walkLeaves(h, 2, func(e object.TreeEntry) error {
		i, ok := chunkIndex(e.Name, d.ext)
		if !ok {
			return fmt.Errorf("unexpected file %q", e.Name)
		}
		out = append(out, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func upTo(n int) []int {
	out := []int{}
	for i := range n {
		out = append(out, i)
	}
	return out
}

// TestFanDropAndLast checks dropping the chunks from an index on, across
// the fan-out's buckets, and finding the last chunk.
func TestFanDropAndLast(t *testing.T) {
	o := newObjects(memory.NewStorage())
	full := fanOf(t, o, ledgerFiles, 250)
	for _, from := range []int{249, 200, 199, 150, 100, 1, 0, 300} {
		t.Run(fmt.Sprint(from), func(t *testing.T) {
			h, err := o.fanDrop(full, ledgerFiles, from)
			if err != nil {
				t.Fatal(err)
			}
			want := upTo(min(from, 250))
			if d := cmp.Diff(want, indices(t, o, ledgerFiles, h)); d != "" {
				t.Errorf("after dropping from %d (-want +got):\n%s", from, d)
			}
			last, ok, err := o.fanLast(h, ledgerFiles)
			if err != nil || ok != (len(want) > 0) || (ok && last != want[len(want)-1]) {
				t.Errorf("fanLast = %d, %v, %v; want the last of %d chunks", last, ok, err, len(want))
			}
			if from == 0 && !h.IsZero() {
				t.Errorf("dropping everything left tree %s, want none", h)
			}
		})
	}
}

// TestFanLastSkipsBucketsOutsideTheLayout checks that a second-level
// directory no fan-out writes (00/150, which fanPath never names) is not
// read as indices 15000 to 15099: fanLast finds the last chunk the
// layout holds.
func TestFanLastSkipsBucketsOutsideTheLayout(t *testing.T) {
	o := newObjects(memory.NewStorage())
	full := fanOf(t, o, ledgerFiles, 250)
	top, err := o.tree(full)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := o.putBlob([]byte("stray"))
	stray := plumbing.ZeroHash
	if err == nil {
		stray, err = o.putTree([]object.TreeEntry{{Name: chunkName(15000), Mode: filemode.Regular, Hash: blob}})
	}
	if err != nil {
		t.Fatal(err)
	}
	buckets, err := o.tree(top[0].Hash) // 00
	if err != nil {
		t.Fatal(err)
	}
	buckets = append(buckets, object.TreeEntry{Name: "150", Mode: filemode.Dir, Hash: stray})
	h, err := o.putTree(buckets)
	if err == nil {
		top[0].Hash = h
		h, err = o.putTree(top)
	}
	if err != nil {
		t.Fatal(err)
	}
	last, ok, err := o.fanLast(h, ledgerFiles)
	if err != nil || !ok || last != 249 {
		t.Errorf("fanLast = %d, %v, %v; want 249", last, ok, err)
	}
}

// TestFanMigrate checks that a directory of the flat layout (before the
// fan-out) is moved into the fanned one whole, and that a fanned one is
// left as it is.
func TestFanMigrate(t *testing.T) {
	o := newObjects(memory.NewStorage())
	var es []object.TreeEntry
	for i := range 150 {
		blob, err := o.putBlob(fmt.Appendf(nil, "%d", i))
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, object.TreeEntry{Name: logChunkName(i), Mode: filemode.Regular, Hash: blob})
	}
	flat, err := o.putTree(es)
	if err != nil {
		t.Fatal(err)
	}
	fanned, err := o.fanMigrate(flat, logFiles)
	if err != nil {
		t.Fatal(err)
	}
	if want := fanOf(t, o, logFiles, 150); fanned != want {
		t.Errorf("migrated tree %s, want %s (the same chunks fanned out)", fanned, want)
	}
	if again, err := o.fanMigrate(fanned, logFiles); err != nil || again != fanned {
		t.Errorf("migrating a fanned tree gave %s, %v; want it unchanged", again, err)
	}
	if data, ok, err := o.fanData(flat, logFiles, 120); err != nil || !ok || string(data) != "120" {
		t.Errorf("fanData in the flat layout = %q, %v, %v; want chunk 120", data, ok, err)
	}
	bad, err := o.putTree(append(es, object.TreeEntry{Name: "notes.txt", Mode: filemode.Regular, Hash: es[0].Hash}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.fanMigrate(bad, logFiles); err == nil {
		t.Error("migrating a directory holding a stray file succeeded, want an error")
	}
}
