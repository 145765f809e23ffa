package state_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(data []byte) []byte
		substr string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "checkpoint.json is corrupt: unexpected end of JSON input"},
		{"empty", func([]byte) []byte { return nil }, "checkpoint.json is corrupt"},
		{"trailing garbage", func(b []byte) []byte { return append(b, "}x"...) }, "checkpoint.json is corrupt"},
		{"future version", replace(`"version": 1`, `"version": 9`), "format version 9"},
		{"other run", replace(`"run_id": "a/b"`, `"run_id": "a/c"`), `belongs to run "a/c"`},
		{"negative counts", replace(`"ledger_events": 1`, `"ledger_events": -1`), "negative ledger or log counts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			d := openStore(t, dir)
			if err := d.Save(t.Context(), newCheckpoint("a/b"), commitFor(1)); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "runs", "a", "b", "checkpoint.json")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, tt.edit(data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = d.Load(t.Context(), "a/b")
			if err == nil || !strings.Contains(err.Error(), tt.substr) || !strings.Contains(err.Error(), file) {
				t.Errorf("Load = %v; want an error naming %s and saying %q", err, file, tt.substr)
			}
			if errors.Is(err, state.ErrNotFound) {
				t.Errorf("a damaged checkpoint is reported as missing: %v", err)
			}
		})
	}
}

// replace edits a checkpoint file, and panics when the edit misses.
func replace(old, new string) func([]byte) []byte {
	return func(b []byte) []byte {
		if !bytes.Contains(b, []byte(old)) {
			panic("checkpoint.json lacks " + old)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
}

func TestSaveRejects(t *testing.T) {
	t.Parallel()
	d := openStore(t, t.TempDir())
	tests := []struct {
		name string
		cp   *state.Checkpoint
		c    state.Commit
	}{
		{"invalid run id", newCheckpoint("../x"), state.Commit{}},
		{"ledger without newline", newCheckpoint("a/b"), state.Commit{Ledger: []byte(`{"n":1}`), Events: 1}},
		{"events without ledger", newCheckpoint("a/b"), state.Commit{Events: 2}},
		{"negative events", newCheckpoint("a/b"), state.Commit{Ledger: []byte("{}\n"), Events: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := *tt.cp
			if err := d.Save(t.Context(), tt.cp, tt.c); err == nil {
				t.Error("Save succeeded")
			}
			if diff := cmp.Diff(&before, tt.cp); diff != "" {
				t.Errorf("failed Save changed cp (-before +after):\n%s", diff)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(d.Path(), "runs")); err == nil {
		t.Error("a refused save touched the disk")
	}
}
