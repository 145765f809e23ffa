package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Save commits one checkpoint of cp.RunID, with what c adds to the ledger,
// the log and the summaries. It writes, in this order:
//
//  1. ledger/<cp.LedgerChunks>.jsonl from c.Ledger, if non-empty;
//  2. summaries/<cp.Iteration>.md from c.Summary, if non-empty; if empty,
//     it removes such a file that no committed checkpoint covers (left by
//     a save killed before its commit), which this commit would cover;
//  3. run.log: truncated to cp.LogBytes (dropping whatever an interrupted
//     save appended), then c.Log appended;
//  4. reviews.json, cp.Decisions as a JSON array, unless it already holds
//     them as an earlier save of this Dir made them durable (decisions
//     change rarely, and each file replaced costs the disk a commit);
//  5. last, checkpoint.json, the commit point.
//
// A chunk or a summary that the committed checkpoint does not cover (the
// next chunk, the summary of a new iteration: every save of a run that
// moves forward) is written in place: nobody reads it before the commit.
// One the committed checkpoint covers (a save that goes back to an
// earlier checkpoint, or a second save of the same iteration) goes
// through a temporary file, fsynced, renamed over the target, and the
// directory fsynced, as reviews.json always does; checkpoint.json is
// always renamed into place. Until the rename of checkpoint.json the
// previous checkpoint stands and nothing written before it is visible to
// readers, so a process killed at any instant leaves the previous
// checkpoint or the new one.
//
// Files 1 to 4, and checkpoint.json's temporary file, are written side
// by side. A save that only moves the run forward from a checkpoint this
// Dir made durable — it adds the next chunk and a new iteration's
// summary, appends to the log and leaves reviews.json as it is: a running
// loop's saves but its first — takes the fast path: it waits for no fsync,
// and checkpoint.json records the sha256 of each file it wrote. Any other
// save fsyncs them all (a journaling file system commits concurrent
// fsyncs together) before checkpoint.json is renamed. Either way, the
// fsyncs that make the commit durable against a crash of the machine
// finish in the background (see startFlush): those of the files a
// fast-path save wrote, and of the run's directory; then the checkpoint,
// durable, is kept as .checkpoint.json.prev (what the next fast-path save
// needs) and the next save's files are created empty. The run's next
// save, its unlock (Lock), Durable and Close wait for that flush and
// report its failure. A process killed after Save returned has lost
// nothing: the rename is done, and the kernel holds what was written. A
// crash of the machine before the flush ended can lose the last
// checkpoint, never the one before: a load that finds checkpoint.json or
// a file it names torn (not what the save wrote) falls back to
// .checkpoint.json.prev.
//
// When the commit is made Save updates cp in place: LedgerChunks (+1 when
// a chunk was written), LedgerEvents (+c.Events), LogBytes (+len(c.Log)),
// UpdatedAt and Version; checkpoint.json holds those new values. On error cp
// is unchanged and the same Save can be retried.
//
// The cost of a save does not depend on the run's length: it writes the new
// chunk and appends to the log, and never lists or rewrites what came before.
//
// Save honours ctx only until the commit starts; to save after a
// cancellation (a cancelled run is saved too), pass
// context.WithoutCancel(ctx).
func (d *Dir) Save(ctx context.Context, cp *Checkpoint, c Commit) error {
	if cp == nil {
		return errors.New("save checkpoint: nil checkpoint")
	}
	if err := d.save(ctx, cp, c); err != nil {
		return fmt.Errorf("save checkpoint %q: %w", cp.RunID, err)
	}
	return nil
}

func (d *Dir) save(ctx context.Context, cp *Checkpoint, c Commit) error {
	if err := checkSave(cp, c); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m := d.runMutex(cp.RunID)
	m.Lock()
	defer m.Unlock()

	run := runDir(cp.RunID)
	next := d.next(cp, c)
	reviews := []byte("[]\n")
	if cp.Decisions != nil {
		var err error
		if reviews, err = json.MarshalIndent(cp.Decisions, "", "  "); err != nil {
			return err
		}
		reviews = append(reviews, '\n')
	}
	if err := d.mkdirs(run); err != nil {
		return err
	}
	if err := d.settle(cp.RunID); err != nil { // the previous commit's flush
		return err
	}
	t, known := d.tip(ctx, cp.RunID, run)
	held := d.reviewsHeld(cp.RunID, run, reviews)
	fast := known && t.durable && held && cp.Iteration > t.iteration && cp.LedgerChunks >= t.chunks && cp.LogBytes >= t.logBytes
	var parts sync.WaitGroup
	errs := make([]error, 5)
	kept := make([]preparedFile, 4) // on the fast path, the files written, for the flush to fsync
	if len(c.Ledger) > 0 {
		fresh := known && cp.LedgerChunks >= t.chunks
		parts.Go(func() { kept[0], errs[0] = d.put(run, ledgerDir, chunkName(cp.LedgerChunks), c.Ledger, fresh, fast) })
	}
	fresh := known && cp.Iteration > t.iteration
	switch {
	case c.Summary != "":
		parts.Go(func() {
			kept[1], errs[1] = d.put(run, summariesDir, summaryName(cp.Iteration), []byte(c.Summary), fresh, fast)
		})
	case fresh:
		parts.Go(func() { errs[1] = d.dropFresh(filepath.Join(run, summariesDir), summaryName(cp.Iteration)) })
	}
	parts.Go(func() { kept[2], errs[2] = d.appendLog(run, cp.LogBytes, c.Log, fast) })
	if !held {
		parts.Go(func() { errs[3] = d.writeReviews(cp.RunID, run, reviews) })
	}
	// checkpoint.json is encoded while the other files are written.
	disk := diskCheckpoint{Checkpoint: next}
	if fast {
		disk.Written = writtenBy(cp, c)
	}
	if data, err := json.MarshalIndent(disk, "", "  "); err != nil {
		errs[4] = err
	} else {
		kept[3], errs[4] = d.stageCheckpoint(run, append(data, '\n'), fast)
	}
	parts.Wait()
	kept = slices.DeleteFunc(kept, func(p preparedFile) bool { return p.f == nil })
	if err := errors.Join(errs...); err != nil {
		closeKept(kept)
		return err
	}
	if err := ctx.Err(); err != nil {
		closeKept(kept)
		return err
	}
	if err := d.root.Rename(filepath.Join(run, "."+checkpointFile+".tmp"), filepath.Join(run, checkpointFile)); err != nil {
		closeKept(kept)
		return err
	}
	fi := d.committed(cp.RunID, run, &next)
	d.startFlush(cp.RunID, run, &next, fi, kept)
	*cp = next
	return nil
}

// next is cp as the save of c commits it: the ledger and log counts, the
// format version and the time.
func (d *Dir) next(cp *Checkpoint, c Commit) Checkpoint {
	next := *cp
	if len(c.Ledger) > 0 {
		next.LedgerChunks++
		next.LedgerEvents += c.Events
	}
	next.LogBytes += int64(len(c.Log))
	next.Version = Version
	next.UpdatedAt = d.now().UTC().Round(0)
	return next
}

// checkSave refuses a save that would commit something inconsistent.
func checkSave(cp *Checkpoint, c Commit) error {
	if err := ValidRunID(cp.RunID); err != nil {
		return err
	}
	switch {
	case cp.Iteration < 0:
		return fmt.Errorf("iteration %d is negative", cp.Iteration)
	case cp.LedgerChunks < 0 || cp.LedgerEvents < 0 || cp.LogBytes < 0:
		return errors.New("negative ledger or log counts")
	case c.Events < 0:
		return fmt.Errorf("commit has %d events", c.Events)
	case len(c.Ledger) == 0 && c.Events != 0:
		return fmt.Errorf("commit counts %d events but its ledger is empty", c.Events)
	case len(c.Ledger) > 0 && !bytes.HasSuffix(c.Ledger, []byte("\n")):
		return errors.New("commit's ledger does not end with a newline; chunks are JSON lines")
	}
	return nil
}

// reviewsHeld reports whether run's reviews.json holds data as a save of
// this Dir made it durable, and still holds it (nobody replaced it since).
func (d *Dir) reviewsHeld(id, run string, data []byte) bool {
	d.mu.Lock()
	saved, ok := d.reviews[id]
	d.mu.Unlock()
	if !ok || !bytes.Equal(saved, data) {
		return false
	}
	disk, err := d.readFile(filepath.Join(run, reviewsFile))
	return err == nil && bytes.Equal(disk, data)
}

// writeReviews replaces run's reviews.json with data and, once that is
// durable, remembers it.
func (d *Dir) writeReviews(id, run string, data []byte) error {
	if err := d.writeAtomic(run, reviewsFile, data); err != nil {
		return err
	}
	d.mu.Lock()
	d.reviews[id] = data
	d.mu.Unlock()
	return nil
}

// put writes name in the subdirectory sub of run, creating sub first: in
// place when fresh (no committed checkpoint covers it), else atomically.
// On the fast path (fast, which implies fresh) it is not fsynced but
// returned open, for the flush.
func (d *Dir) put(run, sub, name string, data []byte, fresh, fast bool) (preparedFile, error) {
	dir := filepath.Join(run, sub)
	if fast {
		return d.putFast(dir, name, data)
	}
	if fresh {
		return preparedFile{}, d.putFresh(dir, name, data)
	}
	if err := d.mkdirs(dir); err != nil {
		return preparedFile{}, err
	}
	return preparedFile{}, d.writeAtomic(dir, name, data)
}

// stageCheckpoint writes checkpoint.json's temporary file: fsynced, or on
// the fast path returned open for the flush (the rename keeps the inode).
func (d *Dir) stageCheckpoint(run string, data []byte, fast bool) (p preparedFile, err error) {
	a := staged(run, checkpointFile, workspace.FileSynced)
	if fast {
		p.dir = run
		p.f, err = d.writeOpen(a.Temp, data)
	} else {
		_, err = a.Stage(d.root, filepath.Join(run, checkpointFile), bytes.NewReader(data))
	}
	if err != nil {
		return preparedFile{}, fmt.Errorf("write %s: %w", d.abs(filepath.Join(run, checkpointFile)), err)
	}
	return p, nil
}

// writeAtomic replaces dir/name with data: temporary file, write, fsync,
// rename, fsync of dir. The temporary file's name is fixed, so one left by
// a killed process is reused by the next save instead of piling up; saves
// of a run are serialised (runMutex in a process, Lock across processes).
func (d *Dir) writeAtomic(dir, name string, data []byte) error {
	if err := staged(dir, name, workspace.DirSynced).Write(d.root, filepath.Join(dir, name), data); err != nil {
		return fmt.Errorf("write %s: %w", d.abs(filepath.Join(dir, name)), err)
	}
	return nil
}

// staged is how dir/name is written atomically: 0644, with its fixed
// temporary file.
func staged(dir, name string, sync workspace.Durable) workspace.Atomic {
	return workspace.Atomic{Perm: 0o644, Sync: sync, Temp: filepath.Join(dir, "."+name+".tmp")}
}

// writeSynced makes the store-relative file rel hold data, and fsyncs it.
func (d *Dir) writeSynced(rel string, data []byte) error {
	f, err := d.writeOpen(rel, data)
	if err != nil {
		return err
	}
	return syncClose(f)
}

// writeOpen makes the store-relative file rel hold data and returns it
// open, not fsynced.
func (d *Dir) writeOpen(rel string, data []byte) (*os.File, error) {
	f, err := d.openWrite(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// syncClose fsyncs and closes f.
func syncClose(f *os.File) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openWrite opens the store-relative file rel for writing with flag. The
// store lies within agents' reach, and a FIFO put in a file's place would
// block open(2) until someone reads it: the open does not wait
// (O_NONBLOCK, which changes nothing for a regular file), and anything
// but a regular file is refused.
func (d *Dir) openWrite(rel string, flag int) (*os.File, error) {
	return workspace.OpenWrite(d.root, rel, flag, 0o644)
}

// appendLog makes run's log its first at bytes followed by data, and
// fsyncs it; on the fast path it returns it open instead, for the flush.
// The log must hold at least the at bytes already committed.
func (d *Dir) appendLog(run string, at int64, data []byte, fast bool) (preparedFile, error) {
	rel := filepath.Join(run, logFile)
	f, err := d.openWrite(rel, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return preparedFile{}, err
	}
	err = truncateAppend(f, at, data)
	if err == nil && fast {
		return preparedFile{dir: run, f: f}, nil
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return preparedFile{}, fmt.Errorf("append to %s: %w", d.abs(rel), err)
	}
	return preparedFile{}, nil
}

// truncateAppend makes f its first at bytes followed by data, not fsynced.
func truncateAppend(f *os.File, at int64, data []byte) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.Size() < at {
		return fmt.Errorf("the log has %d bytes but the checkpoint covers %d", info.Size(), at)
	}
	if info.Size() == at && len(data) == 0 {
		return nil
	}
	if info.Size() > at {
		if err := f.Truncate(at); err != nil {
			return err
		}
	}
	_, err = f.WriteAt(data, at)
	return err
}

// mkdirs creates the store-relative directory rel and its missing parents,
// fsyncing the parent of each directory it creates so the new entry is
// durable before anything inside it is committed.
func (d *Dir) mkdirs(rel string) error {
	if info, err := d.root.Stat(rel); err == nil && info.IsDir() {
		return nil
	}
	parent := "."
	for seg := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		dir := filepath.Join(parent, seg)
		err := d.root.Mkdir(dir, 0o755)
		switch {
		case err == nil:
			if err := d.syncDir(parent); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrExist):
			return err
		}
		parent = dir
	}
	return nil
}
