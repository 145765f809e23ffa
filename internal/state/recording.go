package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Recording is what the gate saw in one iteration of a run (iteration 0
// is the baseline measured before any agent ran): the snapshot it
// measured, the judges' answers (masked), each node call's usage, tier
// and outcome, and the verdicts. A replay restores the snapshot, measures
// it again and compares; it never trusts a recording as evidence.
type Recording struct {
	Iteration int                         `json:"iteration"`
	Snapshot  string                      `json:"snapshot"`
	Void      string                      `json:"void,omitempty"`
	Judges    map[string]gate.JudgeResult `json:"judges,omitempty"`
	Calls     []Call                      `json:"calls,omitempty"`
	Verdicts  []gate.Verdict              `json:"verdicts"`
	Spend     Spend                       `json:"spend"` // the run's spend after the iteration
}

// Call is one node call of a recorded iteration.
type Call struct {
	Node    string  `json:"node"`
	Role    string  `json:"role"`
	Tier    string  `json:"tier,omitempty"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	Failure string  `json:"failure,omitempty"` // masked
}

// ObjectWriter stores the loop root's objects in s and returns its
// snapshot: [workspace.Hasher.WriteObjects].
type ObjectWriter func(ctx context.Context, s storer.EncodedObjectStorer) (workspace.Snapshot, error)

// Names of a run's recording files in the dir: store.
const (
	recordingDir = "recording"
	objectsDir   = "objects"
)

func recordingName(i int) string { return fmt.Sprintf("%04d.json", i) }

// putRecording writes the recording of a save, and the objects of its
// snapshot under runs/<id>/objects, before the checkpoint commits.
func (d *Dir) putRecording(ctx context.Context, runID string, rec *Recording, objects ObjectWriter) error {
	if rec == nil {
		return nil
	}
	run := runDir(runID)
	if objects != nil {
		s, err := d.objectStore(run)
		if err != nil {
			return err
		}
		if _, err := objects(ctx, s); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return d.put(filepath.Join(run, recordingDir), recordingName(rec.Iteration), append(data, '\n'))
}

// objectStore is the loose-object store of a run, made a real directory.
func (d *Dir) objectStore(run string) (*looseObjects, error) {
	dir := filepath.Join(run, objectsDir)
	if err := d.realDir(dir); err != nil {
		return nil, err
	}
	return &looseObjects{d: d, dir: dir, dirs: map[string]bool{}}, nil
}

// realDir makes rel a real directory: whatever else is there (a symbolic
// link planted by an agent, which os.Root follows inside the store) is
// removed first, so no write is redirected.
func (d *Dir) realDir(rel string) error {
	if err := d.mkdirs(filepath.Dir(rel)); err != nil {
		return err
	}
	if fi, err := d.root.Lstat(rel); err == nil && !fi.IsDir() {
		if err := d.root.RemoveAll(rel); err != nil {
			return err
		}
	}
	if err := d.root.Mkdir(rel, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Recordings returns the committed recordings of a run, by iteration,
// and a store of their snapshots' objects. A run without any has an
// error wrapping ErrNotFound.
func (d *Dir) Recordings(ctx context.Context, runID string) ([]Recording, storer.EncodedObjectStorer, error) {
	cp, err := d.load(ctx, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("read recordings %q: %w", runID, err)
	}
	run := runDir(runID)
	var out []Recording
	for i := 0; i <= cp.Iteration; i++ {
		data, err := d.readFile(filepath.Join(run, recordingDir, recordingName(i)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read recordings %q: %w", runID, err)
		}
		var rec Recording
		if err := json.Unmarshal(data, &rec); err != nil || rec.Iteration != i {
			return nil, nil, fmt.Errorf("read recordings %q: iteration %d is corrupt", runID, i)
		}
		out = append(out, rec)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("read recordings %q: %w", runID, notFound("the run has no recording"))
	}
	s, err := d.objectStore(run)
	if err != nil {
		return nil, nil, fmt.Errorf("read recordings %q: %w", runID, err)
	}
	return out, s, nil
}
