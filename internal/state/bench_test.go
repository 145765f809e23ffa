package state_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
)

// BenchmarkSave measures one save of a run 5 iterations long and of one 500
// iterations long (each iteration: a chunk of 20 events, ~2 KiB of log, a
// summary). Every measured save redoes the same next iteration, as a resume
// after a crash would, so the run's length stays fixed while it is timed.
// The cost of a save must not grow with the run; compare the two with
//
//	for i in 1 2 3 4 5 6; do go test -run '^$' -bench '^BenchmarkSave$' -count 1 ./state/; done |
//	  awk '/iteration=5-/ {a += $3; na++} /iteration=500-/ {b += $3; nb++}
//	       END {printf "iteration 500 / iteration 5: %.2f (want ≈1)\n", (b/nb) / (a/na)}'
//
// Separate runs interleave the two, so that drifting fsync latency (most of
// a save's cost on a real disk) hits both alike. With TMPDIR=/dev/shm the
// fsyncs cost nothing and what remains is the store's own work.
func BenchmarkSave(b *testing.B) {
	for _, length := range []int{5, 500} {
		b.Run(fmt.Sprintf("iteration=%d", length), func(b *testing.B) {
			d := openStore(b, b.TempDir())
			cp := newCheckpoint("bench/main")
			for n := 1; n <= length; n++ {
				cp.Iteration = n
				if err := d.Save(b.Context(), cp, benchCommit(n)); err != nil {
					b.Fatal(err)
				}
			}
			base := *cp
			base.Iteration = length + 1
			c := benchCommit(length + 1)
			b.SetBytes(int64(len(c.Ledger) + len(c.Log) + len(c.Summary)))
			for b.Loop() {
				next := base
				if err := d.Save(b.Context(), &next, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchCommit is iteration n's commit: 20 ledger events of ~100 bytes,
// ~2 KiB of log, a short summary.
func benchCommit(n int) state.Commit {
	var ledger, log bytes.Buffer
	for i := range 20 {
		fmt.Fprintf(&ledger, `{"type":"node.finished","iteration":%d,"seq":%d,"node":"fixer","detail":"%s"}`+"\n",
			n, i, strings.Repeat("x", 30))
	}
	for log.Len() < 2048 {
		fmt.Fprintf(&log, "iteration %d: fixer finished in 12.3s, 1234 tokens, $0.0123 %s\n", n, strings.Repeat("-", 30))
	}
	return state.Commit{
		Ledger:  ledger.Bytes(),
		Events:  20,
		Log:     log.Bytes(),
		Summary: fmt.Sprintf("# Iteration %d\n\n- fixer ran\n- tests: 3/5 checks pass\n", n),
	}
}
