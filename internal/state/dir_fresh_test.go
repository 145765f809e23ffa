package state_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
)

// openHeld opens path and returns a function that reads what the open
// file holds then: a file replaced through a rename keeps its old content
// there, one rewritten in place shows the new.
func openHeld(t *testing.T, path string) func() string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func() string {
		buf := make([]byte, 4096)
		n, _ := f.ReadAt(buf, 0)
		return string(buf[:n])
	}
}

// TestCommittedFilesAreNeverRewrittenInPlace: a chunk or summary that the
// committed checkpoint covers (a save that goes back, one at the same
// iteration, one through a Dir that did not see the last commit) is
// replaced through a rename, as every file a save writes is, so that a
// kill mid-write cannot tear it.
func TestCommittedFilesAreNeverRewrittenInPlace(t *testing.T) {
	for _, c := range []struct {
		name string
		// through picks the store that saves iteration 3 again from the
		// checkpoint of iteration 2: other saved iterations 1 and 2, then
		// d saved 3 and 4.
		through func(d, other *state.Dir) *state.Dir
	}{
		{"going back", func(d, _ *state.Dir) *state.Dir { return d }},
		{"a Dir that did not see the last saves", func(_, other *state.Dir) *state.Dir { return other }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			d := openStore(t, dir)
			other := openStore(t, dir)
			cp := newCheckpoint("fresh/main")
			var at2 state.Checkpoint
			for n := 1; n <= 4; n++ {
				s := d
				if n <= 2 {
					s = other
				}
				cp.Iteration = n
				if err := s.Save(t.Context(), cp, commitFor(n)); err != nil {
					t.Fatal(err)
				}
				if n == 2 {
					at2 = *cp
				}
			}
			run := filepath.Join(dir, "runs", "fresh", "main")
			chunk := openHeld(t, filepath.Join(run, "ledger", "0002.jsonl"))
			summary := openHeld(t, filepath.Join(run, "summaries", "0003.md"))
			s, redo := c.through(d, other), at2
			redo.Iteration = 3
			if err := s.Save(t.Context(), &redo, state.Commit{Ledger: []byte("{\"redo\":1}\n"), Events: 1, Summary: "redone\n"}); err != nil {
				t.Fatal(err)
			}
			if got, want := chunk(), string(commitFor(3).Ledger); got != want {
				t.Errorf("committed chunk 0002 was rewritten in place: it holds %q, want %q", got, want)
			}
			if got, want := summary(), commitFor(3).Summary; got != want {
				t.Errorf("committed summary 0003 was rewritten in place: it holds %q, want %q", got, want)
			}
			checkCommitted(t, openStore(t, dir), cp.RunID, string(commitFor(1).Ledger)+string(commitFor(2).Ledger)+"{\"redo\":1}\n",
				string(commitFor(1).Log)+string(commitFor(2).Log))
		})
	}
}

// TestUncommittedSummaryNotExposed: a save killed before its commit can
// leave the next iteration's summary (torn, by hand here); a
// save of that iteration without a summary removes it rather than commit
// it. A second save of an iteration without a summary keeps the one its
// first save committed.
func TestUncommittedSummaryNotExposed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openStore(t, dir)
	ctx := t.Context()
	cp := newCheckpoint("torn/main")
	cp.Iteration = 1
	if err := d.Save(ctx, cp, commitFor(1)); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "runs", "torn", "main")
	writeFile(t, filepath.Join(run, "summaries", "0002.md"), "# Iteration 2\n\nhalf wri")
	cp.Iteration = 2
	if err := d.Save(ctx, cp, state.Commit{Log: []byte("two\n")}); err != nil {
		t.Fatal(err)
	}
	if s, err := openStore(t, dir).Summary(ctx, cp.RunID, 2); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Summary(2) = %q, %v; want ErrNotFound: a killed save's leftover was committed", s, err)
	}
	cp.Iteration = 3
	if err := d.Save(ctx, cp, commitFor(3)); err != nil {
		t.Fatal(err)
	}
	if err := d.Save(ctx, cp, state.Commit{Log: []byte("amended\n")}); err != nil { // as an amendment does
		t.Fatal(err)
	}
	if s, err := openStore(t, dir).Summary(ctx, cp.RunID, 3); err != nil || s != commitFor(3).Summary {
		t.Errorf("Summary(3) after a second save of iteration 3 = %q, %v; want %q", s, err, commitFor(3).Summary)
	}
}
