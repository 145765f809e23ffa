package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/loop-action/loop-action/internal/workspace"
)

// A save that moves a run forward from a checkpoint already durable does
// not wait for the disk (the fast path, see Dir.Save): it writes its new
// files and renames checkpoint.json into place, and the background flush
// fsyncs them. A process killed after Save returned loses nothing (the
// kernel holds what was written); a crash of the machine before the flush
// ended can leave checkpoint.json, or the files it names, torn. So such a
// checkpoint records the sha256 of each file it wrote (written), which a
// load checks, and the checkpoint before it, durable, is kept as
// .checkpoint.prev.json (a hard link made by the flush once the
// checkpoint it links is durable): a torn checkpoint is passed over for
// it. What the previous checkpoint covers the fast path never writes: it
// only adds a chunk and a summary beyond it and appends to the log.

// prevFile is the hard link to the last checkpoint made durable, which a
// load falls back to when checkpoint.json, saved after it, is torn.
const prevFile = "." + checkpointFile + ".prev"

// diskCheckpoint is checkpoint.json: the checkpoint and, after a save that
// did not wait for the disk, what that save wrote.
type diskCheckpoint struct {
	Checkpoint
	Written *written `json:"written,omitempty"`
}

// written is what a fast-path save wrote beyond the checkpoint before it,
// as sha256 sums in hex: the ledger chunk LedgerChunks-1, the summary of
// Iteration, and the log's bytes from LogFrom to LogBytes. An empty sum is
// a file the save did not write.
type written struct {
	Ledger  string `json:"ledger,omitempty"`
	Summary string `json:"summary,omitempty"`
	LogFrom int64  `json:"log_from,omitempty"`
	Log     string `json:"log,omitempty"`
}

// sum is the hex sha256 of data, or "" for nothing.
func sum(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// writtenBy is what the fast-path save of c on top of cp writes.
func writtenBy(cp *Checkpoint, c Commit) *written {
	return &written{Ledger: sum(c.Ledger), Summary: sum([]byte(c.Summary)), LogFrom: cp.LogBytes, Log: sum(c.Log)}
}

// tornError is a checkpoint.json that cannot be what a save wrote: not
// JSON, or naming files that do not hold what it says it wrote. A crash
// of the machine before a fast-path save's flush leaves one.
type tornError struct{ err error }

func (e tornError) Error() string { return e.err.Error() }
func (e tornError) Unwrap() error { return e.err }

// verify checks that the files w says the save of cp wrote (cp as it
// committed them) hold what they held then.
func (d *Dir) verify(run string, cp *Checkpoint, w *written) error {
	check := func(rel string, want string, read func() ([]byte, error)) error {
		if want == "" {
			return nil
		}
		data, err := read()
		if err == nil && sum(data) != want {
			err = errors.New("it does not hold what the checkpoint wrote")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.abs(rel), err)
		}
		return nil
	}
	chunk := filepath.Join(run, ledgerDir, chunkName(cp.LedgerChunks-1))
	summary := filepath.Join(run, summariesDir, summaryName(cp.Iteration))
	log := filepath.Join(run, logFile)
	return errors.Join(
		check(chunk, w.Ledger, func() ([]byte, error) { return d.readFile(chunk) }),
		check(summary, w.Summary, func() ([]byte, error) { return d.readFile(summary) }),
		check(log, w.Log, func() ([]byte, error) { return d.readRange(log, w.LogFrom, cp.LogBytes) }))
}

// readRange reads the bytes from..to of the store-relative file rel,
// which must be a regular file (workspace.OpenFile: never a FIFO).
func (d *Dir) readRange(rel string, from, to int64) ([]byte, error) {
	if from < 0 || to < from || to-from > maxStoreFile {
		return nil, fmt.Errorf("bytes %d to %d cannot be what a save wrote", from, to)
	}
	f, _, err := workspace.OpenFile(d.root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, to-from)
	if _, err := f.ReadAt(buf, from); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("shorter than the checkpoint says")
		}
		return nil, err
	}
	return buf, nil
}

// keepPrev links run's checkpoint.json, which must be the file fi (the
// checkpoint just made durable), as its .checkpoint.prev.json, and makes
// the link durable. It reports whether it did: only then may the next save
// take the fast path.
func (d *Dir) keepPrev(run string, fi fs.FileInfo) bool {
	tmp := filepath.Join(run, "."+checkpointFile+".prev.tmp")
	if err := d.root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if d.root.Link(filepath.Join(run, checkpointFile), tmp) != nil {
		return false
	}
	if now, err := d.root.Lstat(tmp); err != nil || !sameFile(fi, now) {
		_ = d.root.Remove(tmp) // replaced meanwhile: not the checkpoint made durable
		return false
	}
	return d.root.Rename(tmp, filepath.Join(run, prevFile)) == nil && d.syncDir(run) == nil
}

// syncDir fsyncs the store-relative directory rel, making the entries
// created or renamed in it durable (nothing on Windows).
func (d *Dir) syncDir(rel string) error { return workspace.SyncDir(d.root, rel) }
