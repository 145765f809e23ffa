package state_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// recordedSave saves iteration 1 of run id with a recording of the loop
// root at root, and returns the recording.
func recordedSave(t *testing.T, d *state.Dir, id, root string) state.Recording {
	t.Helper()
	h := workspace.NewHasher(root)
	snap, err := h.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rec := state.Recording{Iteration: 1, Snapshot: string(snap),
		Judges:   map[string]gate.JudgeResult{"review": {Node: "review", Provider: "p", Answers: []string{`{"verdict":"pass"}`}}},
		Calls:    []state.Call{{Node: "fixer", Role: "builder", Tokens: 10}},
		Verdicts: []gate.Verdict{{Goal: "tests", Satisfied: true, Passed: 1, Total: 1}}}
	cp := newCheckpoint(id)
	cp.Iteration = 1
	c := commitFor(1)
	c.Recording, c.Objects = &rec, h.WriteObjects
	if err := d.Save(t.Context(), cp, c); err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestRecordingRoundTrip(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "calc.sh"), "echo 5\n")
	writeFile(t, filepath.Join(root, "sub", "notes.md"), "notes\n")
	d := openStore(t, t.TempDir())
	want := recordedSave(t, d, "replay/local", root)

	got, objs, err := d.Recordings(t.Context(), "replay/local")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]state.Recording{want}, got); diff != "" {
		t.Errorf("recordings (-want +got):\n%s", diff)
	}
	scratch := t.TempDir()
	if _, err := workspace.Restore(t.Context(), scratch, objs, workspace.Snapshot(want.Snapshot)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(scratch, "sub", "notes.md"))
	if err != nil || string(data) != "notes\n" {
		t.Errorf("restored sub/notes.md = %q, %v; want the recorded content", data, err)
	}
}

func TestRecordingsOfARunWithoutAny(t *testing.T) {
	t.Parallel()
	d := openStore(t, t.TempDir())
	cp := newCheckpoint("plain/local")
	if err := d.Save(t.Context(), cp, commitFor(0)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Recordings(t.Context(), "plain/local"); !isNotFound(err) {
		t.Errorf("Recordings of a run without any: %v; want ErrNotFound", err)
	}
}

// An agent can write the store (.loop/state is in the loop root): a link
// planted where a run's objects go must not redirect the objects' writes.
func TestRecordingObjectsLinkNotFollowed(t *testing.T) {
	t.Parallel()
	root, store, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "calc.sh"), "echo 5\n")
	run := filepath.Join(store, "runs", "replay", "local")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(run, "objects")); err != nil {
		t.Fatal(err)
	}
	d := openStore(t, store)
	recordedSave(t, d, "replay/local", root)
	if es, _ := os.ReadDir(outside); len(es) > 0 {
		t.Errorf("the link's target holds %d entries; want none written through the link", len(es))
	}
	if fi, err := os.Lstat(filepath.Join(run, "objects")); err != nil || !fi.IsDir() {
		t.Errorf("objects is %v, %v; want a real directory", fi, err)
	}
}

func isNotFound(err error) bool { return errors.Is(err, state.ErrNotFound) }
