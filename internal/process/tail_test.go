package process

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{name: "nothing written", limit: 4, writes: nil, want: ""},
		{name: "empty write", limit: 4, writes: []string{""}, want: ""},
		{name: "under capacity", limit: 4, writes: []string{"ab"}, want: "ab"},
		{name: "exactly full", limit: 4, writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "overflow by one", limit: 4, writes: []string{"abcd", "e"}, want: "bcde"},
		{name: "wraps inside a write", limit: 4, writes: []string{"abc", "def"}, want: "cdef"},
		{name: "wraps twice", limit: 4, writes: []string{"abc", "def", "ghi"}, want: "fghi"},
		{name: "single write larger than capacity", limit: 4, writes: []string{"abcdefghij"}, want: "ghij"},
		{name: "write equal to capacity replaces all", limit: 4, writes: []string{"ab", "wxyz"}, want: "wxyz"},
		{name: "large write after wrap", limit: 4, writes: []string{"abc", "de", "0123456"}, want: "3456"},
		{name: "small write after large", limit: 4, writes: []string{"0123456", "x"}, want: "456x"},
		{name: "capacity one", limit: 1, writes: []string{"a", "bc", "", "d"}, want: "d"},
		{name: "many single bytes", limit: 5, writes: strings.Split("the quick brown fox", ""), want: "n fox"},
		{name: "empty writes keep state", limit: 3, writes: []string{"ab", "", "cd", ""}, want: "bcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := newTailBuffer(tt.limit)
			total := 0
			for _, w := range tt.writes {
				n, err := tb.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
				total += len(w)
			}
			if diff := cmp.Diff(tt.want, string(tb.Bytes())); diff != "" {
				t.Errorf("Bytes() mismatch (-want +got):\n%s", diff)
			}
			if got := tb.Total(); got != int64(total) {
				t.Errorf("Total() = %d, want %d", got, total)
			}
			if got, want := tb.Truncated(), total > tt.limit; got != want {
				t.Errorf("Truncated() = %v, want %v", got, want)
			}
		})
	}
}

// TestTailBufferMatchesModel compares against "keep everything, slice the
// end" for many random write sizes, including many small writes and writes
// larger than the capacity.
func TestTailBufferMatchesModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, limit := range []int{1, 2, 7, 100, 4096, 10000} {
		t.Run(fmt.Sprint("limit=", limit), func(t *testing.T) {
			tb := newTailBuffer(limit)
			var all []byte
			for i := range 500 {
				p := make([]byte, rng.IntN(2*limit+2))
				for j := range p {
					p[j] = byte(i + j)
				}
				_, _ = tb.Write(p)
				all = append(all, p...)
				want := all[max(0, len(all)-limit):]
				if !bytes.Equal(tb.Bytes(), want) {
					t.Fatalf("after write %d (len %d): content differs from model", i, len(p))
				}
			}
			if cap(tb.buf) > limit {
				t.Errorf("buffer capacity %d exceeds limit %d", cap(tb.buf), limit)
			}
		})
	}
}

func TestTailBufferConcurrentWrites(t *testing.T) {
	t.Parallel()
	const writers, writes, limit = 8, 1000, 64
	tb := newTailBuffer(limit)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			chunk := bytes.Repeat([]byte{byte('a' + w)}, 8)
			for range writes {
				_, _ = tb.Write(chunk)
			}
		})
	}
	wg.Wait()
	if got, want := tb.Total(), int64(writers*writes*8); got != want {
		t.Errorf("Total() = %d, want %d", got, want)
	}
	got := tb.Bytes()
	if len(got) != limit {
		t.Fatalf("len(Bytes()) = %d, want %d", len(got), limit)
	}
	// Writes are atomic: the tail is made of whole 8-byte chunks.
	for i := 0; i < limit; i += 8 {
		if c := got[i : i+8]; !bytes.Equal(c, bytes.Repeat(c[:1], 8)) {
			t.Errorf("chunk at %d is torn: %q", i, c)
		}
	}
}

func BenchmarkTailWrite(b *testing.B) {
	for _, size := range []int{16, 512, 32 << 10, 256 << 10} {
		b.Run(fmt.Sprint("write=", size), func(b *testing.B) {
			tb := newTailBuffer(DefaultTailBytes)
			p := bytes.Repeat([]byte("x"), size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = tb.Write(p)
			}
		})
	}
}
