package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Save commits one checkpoint of cp.RunID. It writes, side by side, the
// ledger chunk from c.Ledger, the summary of cp.Iteration from c.Summary
// (or removes one left by a killed save that this commit would cover), the
// log truncated to cp.LogBytes then c.Log appended, reviews.json (unless it
// holds cp.Decisions already) and checkpoint.json's temporary file; once
// all are durable it renames checkpoint.json into place, the commit point,
// and fsyncs the run's directory. Every file but the log is replaced whole
// through [workspace.Atomic], and the log is only appended to beyond what
// the committed checkpoint covers: a process killed, or a machine crashed,
// at any instant leaves the previous checkpoint or the new one, never a
// torn mix.
//
// On commit Save updates cp in place (LedgerChunks, LedgerEvents,
// LogBytes, UpdatedAt, Version, as checkpoint.json holds them); on error cp
// is unchanged and the same Save can be retried. A save writes the new
// chunk and appends to the log, and never lists or rewrites what came
// before. Save honours ctx only until the commit starts; to save after a
// cancellation, pass context.WithoutCancel(ctx).
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
	next, data, reviews, err := encode(cp, c, d.now())
	if err != nil {
		return err
	}
	mem, err := encodeMemory(cp, c)
	if err != nil {
		return err
	}
	if err := d.mkdirs(run); err != nil {
		return err
	}
	var parts sync.WaitGroup
	errs := make([]error, 6)
	if cp.LedgerChunks == 0 { // the first save of a generation
		c.Forget = append(slices.Clone(c.Forget), d.uncommittedEnd(cp)...)
	}
	if mem != nil || len(c.Forget) > 0 {
		parts.Go(func() { errs[5] = d.putMemory(run, c, mem) })
	}
	if len(c.Ledger) > 0 {
		parts.Go(func() { errs[0] = d.put(filepath.Join(run, ledgerDir), chunkName(cp.LedgerChunks), c.Ledger) })
	}
	summaries := filepath.Join(run, summariesDir)
	switch {
	case c.Summary != "":
		parts.Go(func() { errs[1] = d.put(summaries, summaryName(cp.Iteration), []byte(c.Summary)) })
	case cp.Iteration > d.committedIteration(cp.RunID):
		parts.Go(func() { errs[1] = d.dropUncommitted(summaries, summaryName(cp.Iteration)) })
	}
	parts.Go(func() { errs[2] = d.appendLog(run, cp.LogBytes, c.Log) })
	if held, err := d.readFile(filepath.Join(run, reviewsFile)); err != nil || !bytes.Equal(held, reviews) {
		parts.Go(func() { errs[3] = d.put(run, reviewsFile, reviews) })
	}
	if err := d.putRecording(ctx, cp.RunID, c.Recording, c.Objects); err != nil {
		return err
	}
	commit := filepath.Join(run, checkpointFile)
	tmp, err := staged(run, checkpointFile).Stage(d.root, commit, bytes.NewReader(data))
	if err != nil {
		errs[4] = fmt.Errorf("write %s: %w", d.abs(commit), err)
	}
	parts.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := d.root.Rename(tmp, commit); err != nil {
		return err
	}
	if err := d.syncDir(run); err != nil {
		return fmt.Errorf("make %s durable: %w", d.abs(commit), err)
	}
	*cp = next
	return nil
}

// committedIteration is the iteration of run id's committed checkpoint:
// -1 when it has none, or when it cannot be read (then nothing a save
// finds is taken for a killed save's leftover).
func (d *Dir) committedIteration(id string) int {
	cp, err := d.loadFile(id)
	switch {
	case errors.Is(err, ErrNotFound):
		return -1
	case err != nil:
		return math.MaxInt
	}
	return cp.Iteration
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

// put replaces dir/name with data, durably, creating dir first.
func (d *Dir) put(dir, name string, data []byte) error {
	if err := d.mkdirs(dir); err != nil {
		return err
	}
	if err := staged(dir, name).Write(d.root, filepath.Join(dir, name), data); err != nil {
		return fmt.Errorf("write %s: %w", d.abs(filepath.Join(dir, name)), err)
	}
	return nil
}

// staged is how dir/name is written atomically: 0644, fsynced before the
// rename, with a fixed temporary file, so one left by a killed process is
// reused by the next save instead of piling up (saves of a run are
// serialised: runMutex in a process, Lock across processes).
func staged(dir, name string) workspace.Atomic {
	return workspace.Atomic{Perm: 0o644, Sync: workspace.DirSynced, Temp: filepath.Join(dir, "."+name+".tmp")}
}

// dropUncommitted removes dir/name, a file no committed checkpoint covers,
// if it is there: what a save killed before its commit left, which the
// commit about to be made would otherwise cover.
func (d *Dir) dropUncommitted(dir, name string) error {
	err := d.root.Remove(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	return d.syncDir(dir)
}

// appendLog makes run's log its first at bytes followed by data, and
// fsyncs it. The log must hold at least the at bytes already committed.
// The store lies within agents' reach, and a FIFO put in the log's place
// would block open(2): workspace.OpenWrite does not wait, and refuses
// anything but a regular file.
func (d *Dir) appendLog(run string, at int64, data []byte) error {
	rel := filepath.Join(run, logFile)
	f, err := workspace.OpenWrite(d.root, rel, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	err = truncateAppend(f, at, data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", d.abs(rel), err)
	}
	return nil
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

// syncDir fsyncs the store-relative directory rel, making the entries
// created or renamed in it durable (nothing on Windows).
func (d *Dir) syncDir(rel string) error { return workspace.SyncDir(d.root, rel) }
