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
	logBytes  int64       // log bytes committed
	file      fs.FileInfo // checkpoint.json; nil when nothing is committed
	durable   bool        // this Dir made it durable and kept it as .checkpoint.json.prev (keepPrev)
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
	t = tip{iteration: cp.Iteration, chunks: cp.LedgerChunks, logBytes: cp.LogBytes, file: after}
	d.setTip(id, t)
	return t, true
}

// committed records next as run id's commit point, just renamed into
// place, and returns checkpoint.json's description (nil if it cannot be
// had): the next save then needs no read of it.
func (d *Dir) committed(id, run string, next *Checkpoint) fs.FileInfo {
	fi, err := d.root.Lstat(filepath.Join(run, checkpointFile))
	if err != nil {
		d.mu.Lock()
		delete(d.tips, id)
		d.mu.Unlock()
		return nil
	}
	d.setTip(id, tip{iteration: next.Iteration, chunks: next.LedgerChunks, logBytes: next.LogBytes, file: fi})
	return fi
}

// madeDurable marks run id's commit point durable and kept, if it is
// still checkpoint.json as fi describes it.
func (d *Dir) madeDurable(id string, fi fs.FileInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t, ok := d.tips[id]; ok && sameFile(t.file, fi) {
		t.durable = true
		d.tips[id] = t
	}
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

// putFast writes data to dir/name in place and returns it open, not
// fsynced: the fast path of a save, whose flush fsyncs it and dir.
func (d *Dir) putFast(dir, name string, data []byte) (preparedFile, error) {
	if err := d.mkdirs(dir); err != nil {
		return preparedFile{}, err
	}
	rel := filepath.Join(dir, name)
	f, err := d.writeOpen(rel, data)
	if err != nil {
		return preparedFile{}, fmt.Errorf("write %s: %w", d.abs(rel), err)
	}
	return preparedFile{dir: dir, f: f}, nil
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
