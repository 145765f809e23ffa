package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// RunInfo is one line of a listing of runs.
type RunInfo struct {
	ID        string    `json:"id"`
	Status    Status    `json:"status"`
	Iteration int       `json:"iteration"`
	UpdatedAt time.Time `json:"updated_at"`
}

// runIDs finds every runs/<run-id>/checkpoint.json. It does not descend into
// a run's ledger or summaries, whose names no run id segment may take, so
// listing costs the number of runs, not their length.
func (d *Dir) runIDs(context.Context) ([]string, error) {
	var ids []string
	err := fs.WalkDir(d.root.FS(), runsDir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil && p == runsDir && errors.Is(err, fs.ErrNotExist):
			return fs.SkipAll
		case err != nil:
			return err
		case e.IsDir() && (e.Name() == ledgerDir || e.Name() == summariesDir || e.Name() == recordingDir || e.Name() == objectsDir):
			return fs.SkipDir
		case !e.IsDir() && e.Name() == checkpointFile:
			id, ok := strings.CutPrefix(path.Dir(p), runsDir+"/")
			if ok && ValidRunID(id) == nil {
				ids = append(ids, id)
			}
		}
		return nil
	})
	return ids, err
}

func (d *Dir) hold() func()  { return func() {} }
func (d *Dir) place() string { return fmt.Sprintf("in %q", d.path) }

func (d *Dir) ledger(runID string, cp *Checkpoint) ([]byte, error) {
	var out []byte
	for i := range cp.LedgerChunks {
		rel := filepath.Join(runDir(runID), ledgerDir, chunkName(i))
		chunk, err := d.readFile(rel)
		if err != nil {
			return nil, fmt.Errorf("committed chunk %s: %w", d.abs(rel), err)
		}
		out = append(out, chunk...)
	}
	return out, nil
}

func (d *Dir) log(runID string, cp *Checkpoint) ([]byte, error) {
	if cp.LogBytes == 0 {
		return []byte{}, nil
	}
	rel := filepath.Join(runDir(runID), logFile)
	f, _, err := workspace.OpenFile(d.root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, cp.LogBytes)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("%s is shorter than the %d bytes committed: %w", d.abs(rel), cp.LogBytes, err)
	}
	return buf, nil
}

func (d *Dir) summary(runID string, iteration int) ([]byte, bool, error) {
	data, err := d.readFile(filepath.Join(runDir(runID), summariesDir, summaryName(iteration)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// notFound is an error that says what is missing and matches ErrNotFound.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNotFound }

// maxStoreFile bounds one file of the dir: store read back. It is far above
// anything the store writes (ledger chunks and checkpoints are small); the
// bound is there because .loop/state lies in the loop root, within agents'
// reach.
const maxStoreFile = 256 << 20

// readFile reads the store-relative file rel, a regular file only (an
// agent could put a FIFO there, whose open(2) would wait forever), up to
// maxStoreFile bytes.
func (d *Dir) readFile(rel string) ([]byte, error) {
	return workspace.ReadFile(d.root, rel, maxStoreFile)
}
