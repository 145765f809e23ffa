package state

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loop-action/loop-action/internal/backoff"
	"github.com/loop-action/loop-action/internal/gitremote"
)

// Names of the branch store's own entries in a run's tree, beside
// checkpoint.json, ledger/, summaries/ and reviews.json.
const (
	logDir       = "log"
	workspaceDir = "workspace"
)

// ownNames are the entries of a run's tree that belong to the run; the
// others are the trees of nested runs ("a" holds "a/b").
var ownNames = []string{checkpointFile, ledgerDir, logDir, memoryDir, reviewsFile, summariesDir, workspaceDir, recordingDir, snapshotsDir}

func logChunkName(i int) string { return fmt.Sprintf("%04d.log", i) }

// pushRetry is the backoff of pushes that found the branch where they
// left it: up to 32 pushes, waiting 20 ms doubling to 1 s between them,
// each wait spread over its upper half so that writers racing for the
// branch part. maxRefusals is how many refusals that leave the branch
// where it was end the retries (a hook or a protected branch, not a race).
//
// A push that lost to another writer's checkpoint (the branch moved
// meanwhile) waits as long (see overtakenPause) but counts for none of
// the tries: up to maxOvertaken such losses in a save are retried. When
// they counted, a writer that rebuilds slower than the others (under
// load) lost the race until its tries ran out while the others went on
// committing: whether it gave up depended on the machine's speed, not on
// whether the remote took updates.
var pushRetry = backoff.Policy{
	Tries: 32, First: 20 * time.Millisecond, Growth: 2, Cap: time.Second,
	Budget: backoff.Unbounded, Jitter: backoff.UpperHalf,
}

const (
	maxRefusals  = 3
	maxOvertaken = 256
)

// Save commits one checkpoint of cp.RunID, with what c adds to the ledger,
// the log and the summaries, as one commit on the branch: it stores the
// loop root's workspace (only what changed is written), rebuilds the run's
// tree on the head last seen (each numbered file fanned out, see fanPath),
// and pushes a commit of the new root tree with that head as the expected
// old value of the branch, sending only the objects new along the changed
// paths. A save's cost does not grow with the run.
//
// If another writer moved the branch, Save fetches, checks that nobody
// else wrote this run (else it fails with an error wrapping ErrLocked),
// rebuilds on the new head and pushes again, with jittered backoff (see
// pushRetry); when the tries run out the error says "gave up after 32
// attempts". A push this Branch believed failed but that landed is
// recognised as its own. On success Save updates cp as [Dir.Save] does; on
// error cp is unchanged and the same Save can be retried.
//
// Save honours ctx throughout, network included; to save after a
// cancellation, pass context.WithoutCancel(ctx).
func (b *Branch) Save(ctx context.Context, cp *Checkpoint, c Commit) error {
	if cp == nil {
		return errors.New("save checkpoint: nil checkpoint")
	}
	if err := b.save(ctx, cp, c); err != nil {
		return fmt.Errorf("save checkpoint %q: %w", cp.RunID, err)
	}
	return nil
}

// saveFiles are the objects one save adds, stored once for every attempt.
type saveFiles struct {
	checkpoint, reviews, workspace plumbing.Hash
	ledger, summary, log           plumbing.Hash // zero when the save adds none
	memory                         plumbing.Hash // the memory entry; zero for none
	memoryName                     string
	forget                         []string      // generations whose entries the save drops
	recording                      plumbing.Hash // zero when the save records nothing (recording_branch.go)
}

func (b *Branch) save(ctx context.Context, cp *Checkpoint, c Commit) error {
	if err := checkSave(cp, c); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.view(ctx); err != nil {
		return err
	}
	next, files, err := b.prepare(ctx, cp, c)
	if err != nil {
		return err
	}
	if err := b.commitAndPush(ctx, cp, &next, files); err != nil {
		return err
	}
	*cp = next
	// The checkpoint is committed: a failed collection costs disk space
	// only, and is tried again past the next limits.
	_ = b.cache.maybeGC(b.head)
	return nil
}

// prepare returns cp as it will be committed, and stores this save's files.
func (b *Branch) prepare(ctx context.Context, cp *Checkpoint, c Commit) (Checkpoint, saveFiles, error) {
	f := saveFiles{forget: c.Forget}
	next, data, reviews, err := encode(cp, c, b.now())
	if err != nil {
		return next, f, err
	}
	mem, err := encodeMemory(cp, c)
	if err != nil {
		return next, f, err
	}
	if mem != nil {
		f.memoryName = memoryName(c.Memory.Generation)
	}
	if c.KeepWorkspace {
		f.workspace = b.keptWorkspace(cp.RunID)
	}
	if f.workspace.IsZero() && !c.Interrupted {
		ws, err := b.hasher.WriteObjects(ctx, b.cache.store)
		if err != nil {
			return next, f, err
		}
		f.workspace = plumbing.NewHash(string(ws))
	}
	rec, err := recordingBlob(c)
	if err != nil {
		return next, f, err
	}
	err = b.putBlobs(map[*plumbing.Hash][]byte{&f.recording: rec,
		&f.checkpoint: data, &f.reviews: reviews,
		&f.ledger: c.Ledger, &f.summary: []byte(c.Summary), &f.log: c.Log, &f.memory: mem,
	})
	return next, f, err
}

// putBlobs stores each non-empty blob and sets its id; empty ones stay zero.
func (b *Branch) putBlobs(blobs map[*plumbing.Hash][]byte) error {
	for dst, data := range blobs {
		if len(data) == 0 {
			continue
		}
		h, err := b.objs.putBlob(data)
		if err != nil {
			return err
		}
		*dst = h
	}
	return nil
}

// commitAndPush commits the save on the head last seen and pushes it,
// retrying on races. On success the head is the new commit.
func (b *Branch) commitAndPush(ctx context.Context, cp, next *Checkpoint, f saveFiles) error {
	r := race{id: cp.RunID}
	_, err := backoff.Do(ctx, b.retry, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, b.pushRace(ctx, cp, next, f, &r)
	})
	return err
}

// pushRace pushes the save until it lands or fails, or until a push loses
// while the branch stays where it was: that one returns marked for the
// backoff (see pushRetry).
func (b *Branch) pushRace(ctx context.Context, cp, next *Checkpoint, f saveFiles, r *race) error {
	if r.lost != nil { // after the backoff's wait: the branch may have moved
		if done, err := b.afterRace(ctx, r); done || err != nil {
			return err
		}
	}
	for {
		err := b.pushOnce(ctx, cp, next, f, r)
		if !errors.Is(err, gitremote.ErrRace) {
			return err
		}
		r.lost = err
		if err := b.sleep(ctx, overtakenPause(r.overtaken)); err != nil {
			return fmt.Errorf("%w while waiting to retry: %w", err, r.lost)
		}
		if done, err := b.afterRace(ctx, r); done || err != nil {
			return err
		}
		if errors.Is(r.lost, gitremote.ErrRefused) && b.head == r.head {
			if r.refusals++; r.refusals == maxRefusals {
				return r.lost
			}
		}
		if b.head == r.head || r.overtaken == maxOvertaken {
			return backoff.Again(r.lost)
		}
		r.overtaken++
	}
}

// overtakenPause is the wait before pushing again after the n-th loss of
// a save to other writers: pushRetry's, growing as its waits do (a retry at
// once after every loss made eight writers' requests three times as many,
// and the saves slower).
func overtakenPause(n int) time.Duration {
	d := pushRetry.Cap
	if n < 16 {
		d = min(pushRetry.First<<n, pushRetry.Cap)
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d, or until ctx ends (at once with the retry's test clock).
func (b *Branch) sleep(ctx context.Context, d time.Duration) error {
	if b.retry.Sleep != nil {
		return b.retry.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// pushOnce commits the save on the head last seen and pushes it.
func (b *Branch) pushOnce(ctx context.Context, cp, next *Checkpoint, f saveFiles, r *race) error {
	r.base, r.head = ownKey(b.runEntries(r.id)), b.head
	root, own, err := b.build(cp, f)
	if err != nil {
		return err
	}
	r.tried = append(r.tried, ownKey(own))
	b.remember(r.id, ownKey(own))
	if b.beforePush != nil {
		b.beforePush()
	}
	commit, err := b.push(ctx, root, next)
	if err != nil {
		return err
	}
	b.head, b.tree = commit, root
	b.cache.saw(commit)
	return nil
}

// race is what commitAndPush remembers across its attempts.
type race struct {
	id        string
	lost      error         // why the last push failed; nil before the first
	base      string        // the state of the run's files the attempt built on
	head      plumbing.Hash // the head it built on
	tried     []string      // states of the run's files this save pushed
	refusals  int
	overtaken int // pushes lost to other writers' checkpoints
}

// afterRace, after a lost push, fetches the branch and decides: done when
// an earlier attempt landed after all, an error when the push cannot
// succeed (someone else wrote this run).
func (b *Branch) afterRace(ctx context.Context, r *race) (done bool, err error) {
	if err := b.refresh(ctx); err != nil {
		return false, err
	}
	now := ownKey(b.runEntries(r.id))
	switch {
	case slices.Contains(r.tried, now):
		return true, nil
	case now != r.base && !slices.Contains(b.mine[r.id], now):
		return false, fmt.Errorf("%w: another process saved run %q on branch %q meanwhile", ErrLocked, r.id, b.opts.Branch)
	}
	return false, nil
}

// remember records a state of a run's files this Branch pushed, so that a
// push it believed failed is recognised as its own later.
func (b *Branch) remember(id, key string) {
	const keep = 8
	m := append(b.mine[id], key)
	if len(m) > keep {
		m = m[len(m)-keep:]
	}
	b.mine[id] = m
}

// push commits root on the head last seen and pushes the commit.
func (b *Branch) push(ctx context.Context, root plumbing.Hash, next *Checkpoint) (plumbing.Hash, error) {
	sig := b.author
	sig.When = next.UpdatedAt
	c := &object.Commit{
		Author: sig, Committer: sig, TreeHash: root,
		Message: fmt.Sprintf("checkpoint %s iteration %d (%s)\n", next.RunID, next.Iteration, next.Status),
	}
	if !b.head.IsZero() {
		c.ParentHashes = []plumbing.Hash{b.head}
	}
	commit, err := b.objs.putCommit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	objs, err := gitremote.NewObjects(b.objs.tree, root, b.tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	objs = append(objs, commit)
	start := time.Now()
	err = b.remote.Push(ctx, b.cache.store, b.ref, b.head, commit, objs)
	b.exchange += time.Since(start)
	return commit, err
}

// runPath is where a run's tree is in the branch.
func runPath(id string) []string { return append([]string{runsDir}, strings.Split(id, "/")...) }

// runEntries returns the run's own entries at the head last seen.
func (b *Branch) runEntries(id string) []object.TreeEntry {
	es, err := b.objs.entries(b.tree, runPath(id)...)
	if err != nil {
		return nil // build reports it
	}
	return ownOf(es)
}

// keptWorkspace is the workspace tree the run's last checkpoint stored, or
// zero when it has none (a save that keeps the workspace of a run without
// one stores the loop root's, as any first save does).
func (b *Branch) keptWorkspace(id string) plumbing.Hash {
	for _, e := range b.runEntries(id) {
		if e.Name == workspaceDir {
			return e.Hash
		}
	}
	return plumbing.ZeroHash
}

// ownOf returns the entries of a run's tree that belong to the run.
func ownOf(es []object.TreeEntry) []object.TreeEntry {
	return slices.DeleteFunc(slices.Clone(es), func(e object.TreeEntry) bool { return !slices.Contains(ownNames, e.Name) })
}

// ownKey names a state of a run's files.
func ownKey(own []object.TreeEntry) string {
	own = slices.Clone(own)
	slices.SortFunc(own, func(a, b object.TreeEntry) int { return strings.Compare(a.Name, b.Name) })
	var sb strings.Builder
	for _, e := range own {
		fmt.Fprintf(&sb, "%s %s %s\n", e.Mode, e.Hash, e.Name)
	}
	return sb.String()
}
