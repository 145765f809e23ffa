package state_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

func TestStoreRunsAndLatest(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		ctx := t.Context()
		if runs, err := s.Runs(ctx); err != nil || len(runs) != 0 {
			t.Errorf("Runs of an empty store = %v, %v; want none", runs, err)
		}
		if _, err := s.Latest(ctx); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Latest of an empty store: %v, want ErrNotFound", err)
		}

		clock := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		at := func(minute int) {
			setClock(s, func() time.Time { return clock.Add(time.Duration(minute) * time.Minute) })
		}
		save := func(id string, iteration int, status state.Status) {
			t.Helper()
			cp, err := s.Load(ctx, id)
			if errors.Is(err, state.ErrNotFound) {
				cp, err = newCheckpoint(id), nil
			}
			if err != nil {
				t.Fatal(err)
			}
			cp.Iteration, cp.Status = iteration, status
			if err := s.Save(ctx, cp, commitFor(1)); err != nil {
				t.Fatal(err)
			}
		}
		at(1)
		save("loop/a", 1, state.Running)
		at(3)
		save("loop/b", 2, state.Success)
		at(2)
		save("c", 1, state.Running)
		at(4)
		save("loop/a", 2, state.AwaitingReview)
		at(2)
		save("loop/a/nested", 7, state.Running) // ties with "c": by id
		// A run that was only locked is not a run.
		if _, err := s.Lock("loop/locked-only"); err != nil {
			t.Fatal(err)
		}

		want := []state.RunInfo{
			{ID: "loop/a", Status: state.AwaitingReview, Iteration: 2, UpdatedAt: clock.Add(4 * time.Minute)},
			{ID: "loop/b", Status: state.Success, Iteration: 2, UpdatedAt: clock.Add(3 * time.Minute)},
			{ID: "c", Status: state.Running, Iteration: 1, UpdatedAt: clock.Add(2 * time.Minute)},
			{ID: "loop/a/nested", Status: state.Running, Iteration: 7, UpdatedAt: clock.Add(2 * time.Minute)},
		}
		for _, r := range []state.Store{s, f.elsewhere(t)} {
			runs, err := r.Runs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, runs); diff != "" {
				t.Errorf("Runs (-want +got):\n%s", diff)
			}
			latest, err := r.Latest(ctx)
			if err != nil || latest != "loop/a" {
				t.Errorf("Latest = %q, %v; want \"loop/a\"", latest, err)
			}
		}
	})
}

func TestStoreNotFound(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		ctx := t.Context()
		cp := newCheckpoint("loop/a")
		cp.Iteration = 2
		if err := s.Save(ctx, cp, state.Commit{Summary: "two"}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			call func() error
		}{
			{"Load", func() error { _, err := s.Load(ctx, "loop/missing"); return err }},
			{"Load of a run's parent", func() error { _, err := s.Load(ctx, "loop"); return err }},
			{"Ledger", func() error { _, err := s.Ledger(ctx, "loop/missing"); return err }},
			{"Log", func() error { _, err := s.Log(ctx, "loop/missing"); return err }},
			{"Summary of a missing run", func() error { _, err := s.Summary(ctx, "loop/missing", 1); return err }},
			{"Summary of an iteration without one", func() error { _, err := s.Summary(ctx, "loop/a", 1); return err }},
			{"Summary past the checkpoint", func() error { _, err := s.Summary(ctx, "loop/a", 3); return err }},
			{"Summary of a negative iteration", func() error { _, err := s.Summary(ctx, "loop/a", -1); return err }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); !errors.Is(err, state.ErrNotFound) {
					t.Errorf("got %v, want ErrNotFound", err)
				}
			})
		}
		if got, err := s.Summary(ctx, "loop/a", 2); err != nil || got != "two" {
			t.Errorf("Summary(2) = %q, %v; want \"two\"", got, err)
		}
		for _, read := range []func() error{
			func() error { _, err := s.Ledger(ctx, "loop/a"); return err },
			func() error { _, err := s.Log(ctx, "loop/a"); return err },
		} {
			if err := read(); err != nil {
				t.Errorf("reading a run with an empty ledger and log: %v", err)
			}
		}
	})
}
