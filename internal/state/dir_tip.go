package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// flush is the fsync of a run's directory that makes the last rename of
// its checkpoint.json durable, which a save leaves running when it returns;
// it then prepares the files the run's next save will write.
type flush struct {
	done chan struct{}
	err  error
}

// startFlush fsyncs run's directory in the background, then, while the run
// goes on (next.Status is Running), creates the next save's chunk, summary
// and temporary checkpoint file empty, durably: a file created by a save
// costs the disk more than one written into (its inode and directory
// entry join the save's journal commit). They are beyond what next
// covers, so no reader sees them, and whatever the next save does not
// fill is never committed (Save's dropFresh, or a later save's write).
func (d *Dir) startFlush(id, run string, next *Checkpoint) {
	f := &flush{done: make(chan struct{})}
	d.mu.Lock()
	d.flushes[id] = f
	d.mu.Unlock()
	sync := d.flushFn
	if sync == nil {
		sync = d.syncDir
	}
	var files [][2]string
	if next.Status == Running {
		files = [][2]string{
			{filepath.Join(run, ledgerDir), chunkName(next.LedgerChunks)},
			{filepath.Join(run, summariesDir), summaryName(next.Iteration + 1)},
			{run, "." + checkpointFile + ".tmp"},
		}
	}
	go func() {
		defer close(f.done)
		created := d.create(files) // before the fsync, which commits them with the rename
		if f.err = sync(run); f.err == nil {
			d.prepare(created)
		}
	}()
}

// create creates each dir/name that is missing, empty, and returns those
// it could open. It is only a head start for the next save, which creates
// what is still missing itself: errors are left for it to meet.
func (d *Dir) create(files [][2]string) (created [][2]string) {
	for _, df := range files {
		if d.mkdirs(df[0]) != nil {
			continue
		}
		f, err := d.openWrite(filepath.Join(df[0], df[1]), os.O_WRONLY|os.O_CREATE)
		if err != nil {
			continue
		}
		f.Close()
		created = append(created, df)
	}
	return created
}

// prepare makes the files create made, and their directories, durable;
// once the fsync of the run's directory has committed them with the
// rename, on a journaling file system these find nothing left to do.
func (d *Dir) prepare(files [][2]string) {
	dirs := map[string]bool{}
	for _, df := range files {
		f, err := d.openWrite(filepath.Join(df[0], df[1]), os.O_WRONLY)
		if err != nil {
			continue
		}
		if f.Sync() == nil {
			dirs[df[0]] = true
		}
		f.Close()
	}
	for dir := range dirs {
		_ = d.syncDir(dir)
	}
}

// settle waits for run id's flush, if one is running, and returns its
// error (once).
func (d *Dir) settle(id string) error {
	d.mu.Lock()
	f := d.flushes[id]
	delete(d.flushes, id)
	d.mu.Unlock()
	if f == nil {
		return nil
	}
	<-f.done
	if f.err != nil {
		return fmt.Errorf("make the checkpoint of run %q durable: %w", id, f.err)
	}
	return nil
}

// settleAll waits for every flush running.
func (d *Dir) settleAll() error {
	d.mu.Lock()
	ids := make([]string, 0, len(d.flushes))
	for id := range d.flushes {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	slices.Sort(ids)
	var errs []error
	for _, id := range ids {
		errs = append(errs, d.settle(id))
	}
	return errors.Join(errs...)
}
