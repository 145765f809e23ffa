package state_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
)

// BenchmarkSave measures one save of a run 5 iterations long and of one
// 5,000 iterations long (each iteration: a chunk of 20 events, ~2 KiB of
// log, a summary). Every measured save is the run's next iteration, as a
// running loop's are: a new chunk and summary and an append to the log,
// each durable before Save returns. The run grows by the saves measured, a few hundred at most,
// which leaves the two lengths far apart. The cost of a save must not grow with the run; scripts/bench.sh
// compares the two (medians of several runs, which interleave them, so
// that drifting fsync latency, most of a save's cost on a real disk, hits
// both alike). With TMPDIR=/dev/shm the fsyncs cost nothing and what
// remains is the store's own work.
//
// The long run is written straight into the store's layout (runs/<id>/
// ledger/NNNN.jsonl, summaries/NNNN.md, run.log, checkpoint.json), which
// 5,000 fsynced saves would take minutes to make, then synced to disk; a
// Load checks it.
func BenchmarkSave(b *testing.B) {
	for _, length := range []int{5, 5000} {
		b.Run(fmt.Sprintf("iteration=%d", length), func(b *testing.B) {
			dir := b.TempDir()
			cp := seedDir(b, dir, "bench/main", length)
			d := openStore(b, dir)
			if _, err := d.Load(b.Context(), cp.RunID); err != nil {
				b.Fatal(err)
			}
			next := *cp
			c := benchCommit(length + 1)
			b.SetBytes(int64(len(c.Ledger) + len(c.Log) + len(c.Summary)))
			for b.Loop() {
				next.Iteration++
				if err := d.Save(b.Context(), &next, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoad measures the resume of a run 1,000 iterations long from
// the dir: store: a new Dir and the Load of its checkpoint.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	cp := seedDir(b, dir, "bench/main", 1000)
	for b.Loop() {
		d, err := state.OpenDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		if got, err := d.Load(b.Context(), cp.RunID); err != nil || got.Iteration != 1000 {
			b.Fatalf("Load = %+v, %v; want iteration 1000", got, err)
		}
		d.Close()
	}
}

// seedDir writes run id, n iterations of benchCommit long, into the dir:
// store at dir as n saves would leave it, and returns its checkpoint.
func seedDir(b *testing.B, dir, id string, n int) *state.Checkpoint {
	b.Helper()
	run := filepath.Join(dir, "runs", filepath.FromSlash(id))
	cp := newCheckpoint(id)
	cp.Version, cp.UpdatedAt = state.Version, cp.StartedAt
	var log bytes.Buffer
	for it := 1; it <= n; it++ {
		c := benchCommit(it)
		writeFile(b, filepath.Join(run, "ledger", fmt.Sprintf("%04d.jsonl", it-1)), string(c.Ledger))
		writeFile(b, filepath.Join(run, "summaries", fmt.Sprintf("%04d.md", it)), c.Summary)
		log.Write(c.Log)
		cp.Iteration, cp.LedgerChunks, cp.LedgerEvents = it, it, cp.LedgerEvents+c.Events
	}
	cp.LogBytes = int64(log.Len())
	writeFile(b, filepath.Join(run, "run.log"), log.String())
	writeFile(b, filepath.Join(run, "reviews.json"), "[]\n")
	data, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	writeFile(b, filepath.Join(run, "checkpoint.json"), string(data)+"\n")
	syncAll()
	return cp
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
