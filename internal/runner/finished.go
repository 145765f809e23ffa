package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/workspace"
)

// ensureExport writes the export of a run that succeeded without one —
// its process stopped between the two, or this is a fresh checkout of a
// run that finished in another job — and commits the event. The export is
// built from the workspace the gate certified, never from whatever the
// loop root holds now (a fresh checkout holds the files the run started
// from): a store that keeps workspaces restores the checkpoint's into the
// root first, and the root must then be the certified snapshot. The save
// keeps the workspace the store has, so a finished run's is never
// replaced.
func (r *run) ensureExport(ctx context.Context) (string, error) {
	if p := r.exportPath(); p != "" {
		return p, nil
	}
	r.finished = true
	if err := r.certifiedRoot(ctx); err != nil {
		return "", fmt.Errorf("write the success export of run %q: %w", r.cp.RunID, err)
	}
	path, err := r.export(ctx, "")
	if err != nil {
		return "", err
	}
	return path, r.save(ctx, "")
}

// certifiedRoot makes sure the loop root holds the workspace the run's
// success was certified on: restored from the store when it keeps one,
// and in any case hashed and compared with the checkpoint's snapshot.
func (r *run) certifiedRoot(ctx context.Context) error {
	if err := r.restore(ctx); err != nil {
		return err
	}
	if r.cp.Snapshot == "" {
		return errors.New("its checkpoint records no workspace snapshot to build it from")
	}
	now, err := r.hasher.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("hash the loop root: %w", err)
	}
	if string(now) != r.cp.Snapshot {
		return fmt.Errorf("the loop root is at snapshot %s, not %s, which the gate certified; the export is only built from the certified workspace: put its files back, or start a new run",
			now.Short(), workspace.Snapshot(r.cp.Snapshot).Short())
	}
	return nil
}
