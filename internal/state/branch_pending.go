package state

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// pending is a Branch's store: the local state repository, with the
// objects a save creates held in memory until a writer of its own has
// written them to the repository, in the order they were stored, after
// the save returned. A save's ~20 small objects cost ~20 files (a temporary
// file, a write, a rename each); written during the save they were half
// of its own work, now they are off the path from the iteration to its
// pushed checkpoint.
//
// Nothing a later save or a resume needs is lost:
//
//   - until an object is in the repository, reads of this Branch find it
//     in memory;
//   - objects reach the repository in the order they were stored, and
//     git stores an object only after those it names (the workspace's
//     files before their trees, trees before their commit), so a tree in
//     the repository is complete there, after a crash too;
//   - the head's hint file (see Branch.saw), which tells the next process
//     which commit the repository holds whole, is written only once that
//     commit and everything stored before it are written. A process killed
//     before that leaves the previous hint: the next one fetches what it
//     lacks from the remote, which has every pushed object.
//
// A write that fails stops the writer: the objects stay in memory, no
// later hint is written, and the next Save or Close returns the error.
// Collecting the cache (maybeGC) and Close wait for the writer first.
type pending struct {
	*filesystem.Storage // the local state repository

	disk *filesystem.Storage // the writer's own handle on it

	mu    sync.Mutex
	held  map[plumbing.Hash]plumbing.EncodedObject // stored, not yet written
	queue []plumbing.EncodedObject                 // stored, not yet handed to a writer
	done  chan struct{}                            // closed when the last writer started ends
	err   error                                    // the write that stopped the writer
	limit int                                      // objects left to write before stopping (tests); <0: no limit
}

func newPending(s *filesystem.Storage, path string) *pending {
	return &pending{
		Storage: s, disk: filesystem.NewStorage(osfs.New(path), cache.NewObjectLRU(0)),
		held: map[plumbing.Hash]plumbing.EncodedObject{}, limit: -1,
	}
}

// NewEncodedObject returns an object to fill and store.
func (p *pending) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

// SetEncodedObject holds o until the writer writes it.
func (p *pending) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if o.Type() == plumbing.OFSDeltaObject || o.Type() == plumbing.REFDeltaObject {
		return plumbing.ZeroHash, plumbing.ErrInvalidType
	}
	h := o.Hash() // computed now: the writer reads o concurrently
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.held[h]; !ok {
		p.held[h] = o
		p.queue = append(p.queue, o)
	}
	return h, nil
}

// EncodedObject returns object h, held or in the repository.
func (p *pending) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o := p.get(h); o != nil {
		if t != plumbing.AnyObject && o.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return o, nil
	}
	return p.Storage.EncodedObject(t, h)
}

// DeltaObject returns object h as the pack encoder asks for it.
func (p *pending) DeltaObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if p.get(h) != nil {
		return p.EncodedObject(t, h)
	}
	return p.Storage.DeltaObject(t, h)
}

// HasEncodedObject reports whether object h is held or in the repository.
func (p *pending) HasEncodedObject(h plumbing.Hash) error {
	if p.get(h) != nil {
		return nil
	}
	return p.Storage.HasEncodedObject(h)
}

// EncodedObjectSize returns the size of object h.
func (p *pending) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o := p.get(h); o != nil {
		return o.Size(), nil
	}
	return p.Storage.EncodedObjectSize(h)
}

func (p *pending) get(h plumbing.Hash) plumbing.EncodedObject {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[h]
}

// flush hands the objects stored since the last flush to a writer, which
// starts after the previous one ended and runs then (nil: nothing) once
// every object is written. It returns the error that stopped a writer.
func (p *pending) flush(then func()) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	batch, prev, done := p.queue, p.done, make(chan struct{})
	p.queue, p.done = nil, done
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		if p.write(batch) && then != nil {
			then()
		}
	}()
	return nil
}

// write writes batch in order and reports whether it wrote it all.
func (p *pending) write(batch []plumbing.EncodedObject) bool {
	for _, o := range batch {
		if !p.writable() {
			return false
		}
		if _, err := p.disk.SetEncodedObject(o); err != nil {
			p.stop(fmt.Errorf("write object %s to the local state repository: %w", o.Hash(), err))
			return false
		}
		p.mu.Lock()
		delete(p.held, o.Hash())
		p.mu.Unlock()
	}
	return true
}

// writable reports whether the writer may write one more object.
func (p *pending) writable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || p.limit == 0 {
		return false
	}
	if p.limit > 0 {
		p.limit--
	}
	return true
}

func (p *pending) stop(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// wait waits for the writers to end and returns the error that stopped one.
func (p *pending) wait() error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		<-done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close waits for the writers and closes the repository.
func (p *pending) Close() error {
	err := p.wait()
	return errors.Join(err, p.disk.Close(), p.Storage.Close())
}
