package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// tip is what a Dir knows of a run's commit point: the iteration and the
// ledger chunk count of the checkpoint committed there, and checkpoint.json
// as it was when this Dir last wrote or read it. A save writes a chunk or a
// summary the committed checkpoint does not cover straight into place (one
// fsync, no rename); one it covers is replaced through a temporary file, so
// a process killed mid-write never tears a committed file.
type tip struct {
	iteration int         // -1: nothing is committed
	chunks    int         // ledger chunks committed
	file      fs.FileInfo // checkpoint.json; nil when nothing is committed
}

// tip returns the commit point of run id (whose directory is run). ok is
// false when it cannot be told: checkpoint.json is unreadable, or was
// replaced while it was read.
func (d *Dir) tip(ctx context.Context, id, run string) (t tip, ok bool) {
	rel := filepath.Join(run, checkpointFile)
	before, err := d.root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return tip{iteration: -1}, true
	}
	if err != nil {
		return tip{}, false
	}
	d.mu.Lock()
	t, ok = d.tips[id]
	d.mu.Unlock()
	if ok && sameFile(t.file, before) {
		return t, true
	}
	cp, err := d.load(ctx, id)
	if err != nil {
		return tip{}, false
	}
	after, err := d.root.Lstat(rel)
	if err != nil || !sameFile(before, after) {
		return tip{}, false
	}
	t = tip{iteration: cp.Iteration, chunks: cp.LedgerChunks, file: after}
	d.setTip(id, t)
	return t, true
}

// committed records next as run id's commit point, just renamed into
// place: the next save then needs no read of it.
func (d *Dir) committed(id, run string, next *Checkpoint) {
	fi, err := d.root.Lstat(filepath.Join(run, checkpointFile))
	if err != nil {
		d.mu.Lock()
		delete(d.tips, id)
		d.mu.Unlock()
		return
	}
	d.setTip(id, tip{iteration: next.Iteration, chunks: next.LedgerChunks, file: fi})
}

func (d *Dir) setTip(id string, t tip) {
	d.mu.Lock()
	d.tips[id] = t
	d.mu.Unlock()
}

// sameFile reports whether a and b describe one file, unchanged: the same
// file, size and modification time.
func sameFile(a, b fs.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// putFresh writes data to dir/name in place and fsyncs it and dir: for a
// file no committed checkpoint covers, which nobody reads until the next
// rename of checkpoint.json.
func (d *Dir) putFresh(dir, name string, data []byte) error {
	if err := d.mkdirs(dir); err != nil {
		return err
	}
	rel := filepath.Join(dir, name)
	if err := d.writeSynced(rel, data); err != nil {
		return fmt.Errorf("write %s: %w", d.abs(rel), err)
	}
	return d.syncDir(dir)
}

// dropFresh removes dir/name, a file no committed checkpoint covers, if it
// is there: what a save killed before its commit left, which the commit
// about to be made would otherwise cover.
func (d *Dir) dropFresh(dir, name string) error {
	err := d.root.Remove(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	return d.syncDir(dir)
}
