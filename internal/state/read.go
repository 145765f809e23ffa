package state

import (
	"context"
	"encoding/json"
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
		case e.IsDir() && (e.Name() == ledgerDir || e.Name() == summariesDir || e.Name() == memoryDir || e.Name() == recordingDir || e.Name() == objectsDir):
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

func (d *Dir) memories(runID string) ([]storedMemory, error) {
	dir := filepath.Join(runDir(runID), memoryDir)
	es, err := workspace.ReadDir(d.root, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []storedMemory
	for _, e := range es {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue // a temporary file of a save
		}
		data, err := d.readFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("memory entry %s: %w", d.abs(filepath.Join(dir, e.Name())), err)
		}
		out = append(out, storedMemory{e.Name(), data})
	}
	return out, nil
}

// putMemory writes the run's memory entry (mem, if not nil) and drops the
// entries c forgets and those past MaxMemoryPerRun.
func (d *Dir) putMemory(run string, c Commit, mem []byte) error {
	dir := filepath.Join(run, memoryDir)
	var have []string
	if es, err := workspace.ReadDir(d.root, dir); err == nil {
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
				have = append(have, e.Name())
			}
		}
	}
	put := ""
	if mem != nil {
		put = memoryName(c.Memory.Generation)
		if err := d.put(dir, put, mem); err != nil {
			return err
		}
	}
	_, drop := memoryNames(have, put, c.Forget)
	removed := false
	for _, name := range drop {
		err := d.root.Remove(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed = removed || err == nil
	}
	if removed {
		return d.syncDir(dir)
	}
	return nil
}

// uncommittedEnd names the entry a killed save left of the generation the
// run's committed checkpoint is of, when cp starts another: the end it
// records was never committed, and with a new generation the visibility
// rule (reads.Memory) would no longer hide it.
func (d *Dir) uncommittedEnd(cp *Checkpoint) []string {
	was, err := d.loadFile(cp.RunID)
	if err != nil || GenerationName(was.StartedAt) == GenerationName(cp.StartedAt) {
		return nil
	}
	gen := GenerationName(was.StartedAt)
	data, err := d.readFile(filepath.Join(runDir(cp.RunID), memoryDir, memoryName(gen)))
	var m Memory
	if err != nil || json.Unmarshal(data, &m) != nil || visible(was, m) {
		return nil
	}
	return []string{gen}
}
