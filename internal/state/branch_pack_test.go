package state

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

func TestBucketCodec(t *testing.T) {
	for _, tc := range []struct {
		name string
		lo   int
		fs   []bucketFile
	}{
		{"full", 300, func() []bucketFile {
			var fs []bucketFile
			for i := 300; i < 400; i++ {
				fs = append(fs, bucketFile{i, fmt.Appendf(nil, "chunk %d\n", i)})
			}
			return fs
		}()},
		{"gaps and an empty file", 0, []bucketFile{{1, []byte("one\n")}, {7, []byte{}}, {99, []byte("\n\nlast")}}},
		{"one file", 12300, []bucketFile{{12345, []byte("x")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeBucket(encodeBucket(tc.fs), tc.lo)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.fs, got, cmp.AllowUnexported(bucketFile{})); d != "" {
				t.Errorf("decoded bucket (-want +got):\n%s", d)
			}
		})
	}
}

func TestBucketDecodeRejects(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"no header", "0 3\n\nabc"},
		{"header not ended", bucketMagic + "0 3\n"},
		{"bad line", bucketMagic + "0\n\n"},
		{"negative size", bucketMagic + "0 -1\n\n"},
		{"index below the bucket", bucketMagic + "99 1\n\nx"},
		{"index past the bucket", bucketMagic + "200 1\n\nx"},
		{"indices out of order", bucketMagic + "101 1\n100 1\n\nxy"},
		{"index repeated", bucketMagic + "101 1\n101 1\n\nxy"},
		{"index not canonical", bucketMagic + "0101 1\n\nx"},
		{"body too short", bucketMagic + "100 4\n\nxyz"},
		{"body too long", bucketMagic + "100 2\n\nxyz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if fs, err := decodeBucket([]byte(tc.data), 100); err == nil {
				t.Errorf("decodeBucket(%q) = %v, want an error", tc.data, fs)
			}
		})
	}
}

// contents reads every file of the directory tree h, in any layout.
func contents(t *testing.T, o *objects, d indexed, h plumbing.Hash) map[int]string {
	t.Helper()
	all, err := o.fanAll(h, d)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for i, data := range all {
		out[i] = string(data)
	}
	return out
}

// numbered is what fanOf(n) stores: file i holds "i".
func numbered(n int) map[int]string {
	out := map[int]string{}
	for i := range n {
		out[i] = fmt.Sprint(i)
	}
	return out
}

// packed returns fanOf(n) with its due buckets consolidated, one per call
// of fanPack as saves do, and checks that it stops when none is due.
func packed(t *testing.T, o *objects, d indexed, n int) plumbing.Hash {
	t.Helper()
	h := fanOf(t, o, d, n)
	for range n / bucketSpan {
		next, err := o.fanPack(h, d)
		if err != nil {
			t.Fatal(err)
		}
		if next == h {
			break
		}
		h = next
	}
	if again, err := o.fanPack(h, d); err != nil || again != h {
		t.Fatalf("fanPack with no bucket due = %s, %v; want the tree unchanged", again, err)
	}
	return h
}

// TestFanPackDropAndLast checks that consolidated buckets read as the
// files they hold, and dropping the files from an index on, inside a
// consolidated bucket or not, and finding the last file.
func TestFanPackDropAndLast(t *testing.T) {
	o := newObjects(memory.NewStorage())
	full := packed(t, o, ledgerFiles, 250)
	for _, p := range [][]string{{"00", "00.jsonl"}, {"00", "01.jsonl"}, {"00", "02", "0249.jsonl"}} {
		if _, ok, err := o.lookup(full, p); err != nil || !ok {
			t.Fatalf("the packed tree lacks %v: %v", p, err)
		}
	}
	if d := cmp.Diff(numbered(250), contents(t, o, ledgerFiles, full)); d != "" {
		t.Fatalf("the packed tree's files (-want +got):\n%s", d)
	}
	for _, from := range []int{249, 200, 199, 150, 101, 100, 99, 42, 1, 0, 300} {
		t.Run(fmt.Sprint(from), func(t *testing.T) {
			h, err := o.fanDrop(full, ledgerFiles, from)
			if err != nil {
				t.Fatal(err)
			}
			want := numbered(min(from, 250))
			if d := cmp.Diff(want, contents(t, o, ledgerFiles, h)); d != "" {
				t.Errorf("after dropping from %d (-want +got):\n%s", from, d)
			}
			last, ok, err := o.fanLast(h, ledgerFiles)
			if err != nil || ok != (len(want) > 0) || (ok && last != len(want)-1) {
				t.Errorf("fanLast = %d, %v, %v; want the last of %d files", last, ok, err, len(want))
			}
			for _, i := range []int{0, 99, 100, 150, 249} {
				data, ok, err := o.fanData(h, ledgerFiles, i)
				if err != nil || ok != (i < len(want)) || (ok && string(data) != want[i]) {
					t.Errorf("fanData(%d) = %q, %v, %v; want %q", i, data, ok, err, want[i])
				}
			}
		})
	}
}

// TestFanPackMergesOldWrites: a version before the consolidation, saving
// from an older checkpoint, writes files into the directory of a hundred
// beside its consolidated blob. The new files win on reads, and the next
// consolidation of that hundred merges both, the new files first.
func TestFanPackMergesOldWrites(t *testing.T) {
	o := newObjects(memory.NewStorage())
	h := packed(t, o, summaryFiles, 250)
	blob, err := o.putBlob([]byte("rewritten"))
	if err == nil {
		h, err = o.fanPut(h, summaryFiles, 50, blob)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := numbered(250)
	want[50] = "rewritten"
	if d := cmp.Diff(want, contents(t, o, summaryFiles, h)); d != "" {
		t.Errorf("beside the blob (-want +got):\n%s", d)
	}
	if data, ok, err := o.fanData(h, summaryFiles, 50); err != nil || !ok || string(data) != "rewritten" {
		t.Errorf("fanData(50) = %q, %v, %v; want the new file", data, ok, err)
	}
	if h, err = o.fanPack(h, summaryFiles); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := o.lookup(h, []string{"00", "00"}); err != nil || ok {
		t.Errorf("the directory beside the blob is still there after fanPack: %v", err)
	}
	if d := cmp.Diff(want, contents(t, o, summaryFiles, h)); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}

// FuzzDecodeBucket: decoding never panics, and a bucket it accepts is the
// one encodeBucket writes for the files it returns — one encoding per
// content, so a bucket read back is never taken for another.
func FuzzDecodeBucket(f *testing.F) {
	f.Add(encodeBucket([]bucketFile{{100, []byte("a\n")}, {101, nil}, {199, []byte("zz")}}), 100)
	f.Add([]byte(bucketMagic+"\n"), 0)
	f.Add([]byte(bucketMagic+"5 +1\n\nx"), 0)
	f.Add([]byte(bucketMagic+"5 01\n\nx"), 0)
	f.Fuzz(func(t *testing.T, data []byte, lo int) {
		lo = bucketLo(max(lo, 0) % 1_000_000)
		fs, err := decodeBucket(data, lo)
		if err != nil {
			return
		}
		if got := encodeBucket(fs); !bytes.Equal(got, data) {
			t.Errorf("decoded %q as %d files, which encode as %q", data, len(fs), got)
		}
	})
}
