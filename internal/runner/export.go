package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/loop-action/loop-action/internal/delivery"
	"github.com/loop-action/loop-action/internal/export"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Archive reads what a store kept of a run; the success export needs it.
type Archive interface {
	Ledger(ctx context.Context, runID string) ([]byte, error)
	Summary(ctx context.Context, runID string, iteration int) (string, error)
}

// ExportDir is where a run's success export goes when Options.ExportDir
// is empty: .loop/export in the loop root.
func ExportDir(root string) string { return filepath.Join(root, ".loop", "export") }

func exportDir(opts Options) string {
	if opts.ExportDir != "" {
		return opts.ExportDir
	}
	return ExportDir(opts.Root)
}

// exportPath is where the run's export is, when it exists.
func (r *run) exportPath() string {
	if r.cp.Status != state.Success {
		return ""
	}
	p := filepath.Join(exportDir(r.opts), export.SanitizeName(r.cfg.Name)+"-success")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func (r *run) writeExport(ctx context.Context, summary string) (string, error) {
	committed, _ := r.opts.Store.(Archive)
	arch := pendingArchive{Archive: committed, ledger: r.rec.Pending(), iteration: r.cp.Iteration, summary: summary}
	return WriteExport(ctx, arch, r.cfg, r.cp, r.opts.Root, exportDir(r.opts), r.opts.Version, r.opts.Env, checkout(r.opts))
}

// pendingArchive is the store's archive plus what this process recorded
// but has not committed yet: the export is written before the success it
// belongs to is saved.
type pendingArchive struct {
	Archive   // nil when the store keeps no archive
	ledger    []byte
	iteration int
	summary   string
}

func (p pendingArchive) Ledger(ctx context.Context, runID string) ([]byte, error) {
	var committed []byte
	if p.Archive != nil {
		b, err := p.Archive.Ledger(ctx, runID)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, err
		}
		committed = b
	}
	return append(committed, p.ledger...), nil
}

func (p pendingArchive) Summary(ctx context.Context, runID string, iteration int) (string, error) {
	if iteration == p.iteration && p.summary != "" {
		return p.summary, nil
	}
	if p.Archive == nil {
		return "", state.ErrNotFound
	}
	return p.Archive.Summary(ctx, runID, iteration)
}

// WriteExport writes the success export of a successful run into dir and
// returns its path. The run's history comes from the archive when given.
// env is the environment the run's agents had: the export withholds every
// file that holds the value of a provider's env variable (Secrets). k is
// how the run read the loop root (its git settings and largest file), for
// the diff of changes.patch.
func WriteExport(ctx context.Context, arch Archive, cfg *loop.Config, cp *state.Checkpoint, root, dir, version string, env []string, k workspace.Checkout) (string, error) {
	if cp.Status != state.Success {
		return "", fmt.Errorf("run %q is %s: only a successful run has a success export", cp.RunID, cp.Status)
	}
	hist, err := history(ctx, arch, cp)
	if err != nil {
		return "", err
	}
	in := export.Input{
		Config: cfg, RunID: cp.RunID, Commit: cp.Commit, Snapshot: cp.Snapshot, Verdicts: cp.Verdicts,
		History: hist, Root: root, Finished: cp.UpdatedAt, Version: version, Secrets: Secrets(cfg, env),
		Spend:   export.Spend{Tokens: cp.Spend.Tokens, Estimated: cp.Spend.Estimated, CostUSD: cp.Spend.CostUSD, WallClock: cp.Spend.WallClock},
		Changes: changes(ctx, root, cp, k),
	}
	path, _, err := export.Write(dir, in)
	return path, err
}

// changes computes changes.patch: the diff from the commit the run
// started from to the certified snapshot, which the loop root holds when
// the export is written. Without the commit, or when the root is not the
// snapshot any more, the export says why it has none.
func changes(ctx context.Context, root string, cp *state.Checkpoint, k workspace.Checkout) *export.Changes {
	if cp.Commit == "" {
		return &export.Changes{Missing: "the commit the run started from is unknown (the loop root was not a git checkout)"}
	}
	d, err := delivery.Build(ctx, delivery.Spec{
		Root: root, Base: cp.Commit, Snapshot: cp.Snapshot, Message: "changes.patch\n",
		Author:   delivery.Identity{Name: "loop-action", Email: "loop-action@localhost"},
		Checkout: k,
	})
	var patch string
	if err == nil {
		patch, err = d.Patch()
	}
	switch {
	case errors.Is(err, plumbing.ErrObjectNotFound), errors.Is(err, git.ErrRepositoryNotExists):
		return &export.Changes{Missing: fmt.Sprintf("the commit %s the run started from is not in the loop root's .git", phrase.Short(cp.Commit))}
	case errors.Is(err, delivery.ErrRootMoved):
		return &export.Changes{Missing: "the loop root no longer holds the certified snapshot"}
	case err != nil:
		return &export.Changes{Missing: "it could not be computed: " + err.Error()}
	}
	return &export.Changes{Patch: patch, Files: len(d.Changes)}
}

// history rebuilds the iterations from the ledger's gate rulings and the
// stored summaries.
func history(ctx context.Context, arch Archive, cp *state.Checkpoint) ([]export.Iteration, error) {
	if arch == nil {
		return nil, nil
	}
	b, err := arch.Ledger(ctx, cp.RunID)
	if err != nil {
		return nil, fmt.Errorf("read the ledger of run %q: %w", cp.RunID, err)
	}
	events, err := ledger.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read the ledger of run %q: %w", cp.RunID, err)
	}
	byIter := map[int]ledger.Event{}
	for _, e := range events {
		if e.Type == ledger.GateEvaluated && e.Iteration > 0 {
			byIter[e.Iteration] = e
		}
	}
	var out []export.Iteration
	for n := 1; n <= cp.Iteration; n++ {
		e, ok := byIter[n]
		if !ok {
			continue
		}
		sum, _ := arch.Summary(ctx, cp.RunID, n)
		out = append(out, export.Iteration{N: n, Satisfied: e.Satisfied, Total: e.Goals, Summary: sum})
	}
	return out, nil
}
