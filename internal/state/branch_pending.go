package state

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// pending is a Branch's store: the local state repository, with the
// objects the saves create held in memory until a writer of its own has
// written them to the repository, packAt of them at a time as one pack, in
// the order they were stored, after the saves returned. A save's ~20
// small objects cost ~20 files (a temporary file, a write, a rename each):
// written during the save they were half of its own work, and written
// loose after it, most of its CPU time. A pack of many saves' objects is
// two files.
//
// Nothing a later save or a resume needs is lost:
//
//   - until an object is in the repository (and this Branch has seen the
//     pack that holds it), reads find it in memory;
//   - the packs reach the repository whole and in the order their objects
//     were stored, and git stores an object only after those it names (the
//     workspace's files before their trees, trees before their commit), so
//     a tree in the repository is complete there, after a crash too;
//   - the head's hint file (see Branch.saw), which tells the next process
//     which commit the repository holds whole, is written only once that
//     commit and everything stored before it are written. A process killed
//     before that leaves an older hint: the next one fetches what it lacks
//     from the remote, which has every pushed object.
//
// A write that fails stops the writer: the objects stay in memory, no
// later hint is written, and the next Save or Close returns the error.
// Collecting the cache (maybeGC) and Close write what is held and wait.
type pending struct {
	*filesystem.Storage // the local state repository

	disk   *filesystem.Storage // the writer's own handle on it
	packAt int                 // objects held before a writer packs them

	mu      sync.Mutex
	held    map[plumbing.Hash]plumbing.EncodedObject // stored, not yet seen in the repository
	queue   []plumbing.Hash                          // stored, not yet handed to a writer
	hint    func()                                   // writes the hint of the newest head queued
	written []plumbing.Hash                          // written, held until settle
	done    chan struct{}                            // closed when the last writer started ends
	err     error                                    // the write that stopped the writer
	stopped bool                                     // tests: the writer writes nothing more
}

// packAt is how many objects are held before they are written.
const packAt = 256

func newPending(s *filesystem.Storage, path string) *pending {
	return &pending{
		Storage: s, disk: filesystem.NewStorage(osfs.New(path), cache.NewObjectLRU(0)),
		packAt: packAt, held: map[plumbing.Hash]plumbing.EncodedObject{},
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
		p.queue = append(p.queue, h)
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

// flush has the objects stored so far written once packAt of them are
// held, then runs then (nil: nothing) once all are written. It returns the
// error that stopped a writer.
func (p *pending) flush(then func()) error {
	p.settle()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if then != nil {
		p.hint = then
	}
	if len(p.queue) >= p.packAt || (len(p.queue) == 0 && p.hint != nil) {
		p.start()
	}
	return nil
}

// start hands the queue to a writer, which starts once the previous one
// ended. Callers hold p.mu.
func (p *pending) start() {
	batch, then, prev, done := p.queue, p.hint, p.done, make(chan struct{})
	p.queue, p.hint, p.done = nil, nil, done
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		if p.write(batch) && then != nil {
			then()
		}
	}()
}

// write writes batch as one pack and reports whether it did.
func (p *pending) write(batch []plumbing.Hash) bool {
	if len(batch) == 0 {
		return true
	}
	p.mu.Lock()
	ok := p.err == nil && !p.stopped
	p.mu.Unlock()
	if !ok {
		return false
	}
	if err := p.writePack(batch); err != nil {
		p.mu.Lock()
		p.err = fmt.Errorf("write %d objects to the local state repository: %w", len(batch), err)
		p.mu.Unlock()
		return false
	}
	p.mu.Lock()
	p.written = append(p.written, batch...)
	p.mu.Unlock()
	return true
}

// writePack writes batch, which p holds, to the repository as one pack
// (without deltas: collecting the cache makes the smaller pack).
func (p *pending) writePack(batch []plumbing.Hash) error {
	w, err := p.disk.PackfileWriter()
	if err != nil {
		return err
	}
	_, err = packfile.NewEncoder(w, p, false).Encode(batch, 0)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// settle makes the repository's new packs visible to this Branch's reads
// and forgets the objects they hold.
func (p *pending) settle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.written) == 0 {
		return
	}
	p.Storage.Reindex()
	for _, h := range p.written {
		delete(p.held, h)
	}
	p.written = nil
}

// wait writes what is held, waits for the writers to end and returns the
// error that stopped one.
func (p *pending) wait() error {
	p.mu.Lock()
	if p.err == nil && (len(p.queue) > 0 || p.hint != nil) {
		p.start()
	}
	done := p.done
	p.mu.Unlock()
	if done != nil {
		<-done
	}
	p.settle()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close writes what is held, waits for the writers and closes the
// repository.
func (p *pending) Close() error {
	err := p.wait()
	return errors.Join(err, p.disk.Close(), p.Storage.Close())
}
