package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// flush is the fsync of a run's directory that makes the last rename of
// its checkpoint.json durable, which a save leaves running when it returns;
// after a fast-path save, it first fsyncs the files that save wrote. Once
// the checkpoint is durable it keeps it as .checkpoint.json.prev (keepPrev),
// then prepares the files the run's next save will write.
type flush struct {
	done chan struct{}
	err  error
}

// startFlush makes run's checkpoint next durable in the background:
// it fsyncs the files a fast-path save left open (kept), their
// directories and run's; then it keeps checkpoint.json, still the file fi,
// as .checkpoint.json.prev, which lets the next save take the fast path;
// then, while the run goes on (next.Status is Running), it creates the
// next save's chunk, summary and temporary checkpoint file empty, durably:
// a file created by a save costs the disk more than one written into (its
// inode and directory entry join the save's journal commit). They are
// beyond what next covers, so no reader sees them, and whatever the next
// save does not fill is never committed (Save's dropFresh, or a later
// save's write).
func (d *Dir) startFlush(id, run string, next *Checkpoint, fi fs.FileInfo, kept []preparedFile) {
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
		err := d.syncKept(run, kept)
		if err == nil {
			err = sync(run)
		}
		f.err = err
		if err == nil && fi != nil && d.keepPrev(run, fi) {
			d.madeDurable(id, fi)
		}
		d.prepare(created, err == nil)
	}()
}

// syncKept fsyncs and closes the files a fast-path save wrote, then
// fsyncs their directories other than run (whose fsync follows).
func (d *Dir) syncKept(run string, kept []preparedFile) error {
	var errs []error
	dirs := map[string]bool{}
	for _, p := range kept {
		errs = append(errs, syncClose(p.f))
		dirs[p.dir] = p.dir != run
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for dir, other := range dirs {
		if other {
			errs = append(errs, d.syncDir(dir))
		}
	}
	return errors.Join(errs...)
}

// closeKept closes the files a fast-path save wrote, when it fails.
func closeKept(kept []preparedFile) {
	for _, p := range kept {
		p.f.Close()
	}
}

// preparedFile is a file the flush created for the next save, still open.
type preparedFile struct {
	dir string
	f   *os.File
}

// create creates each dir/name that is missing, empty, and returns those
// it could open, open. It is only a head start for the next save, which
// creates what is still missing itself: errors are left for it to meet.
func (d *Dir) create(files [][2]string) (created []preparedFile) {
	for _, df := range files {
		if d.mkdirs(df[0]) != nil {
			continue
		}
		f, err := d.openWrite(filepath.Join(df[0], df[1]), os.O_WRONLY|os.O_CREATE)
		if err == nil {
			created = append(created, preparedFile{dir: df[0], f: f})
		}
	}
	return created
}

// prepare closes the files create made and, when sync is set, first makes
// them and their directories durable; once the fsync of the run's
// directory has committed them with the rename, on a journaling file
// system these find nothing left to do.
func (d *Dir) prepare(files []preparedFile, sync bool) {
	dirs := map[string]bool{}
	for _, p := range files {
		if sync && p.f.Sync() == nil {
			dirs[p.dir] = true
		}
		p.f.Close()
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
