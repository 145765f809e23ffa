package isolate

import (
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_ATTRIB |
	syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF |
	syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

// syncFile is the file in syncDir that sync writes.
const syncFile = "seq"

// syncTimeout bounds the wait for the watcher to catch up; past it, the
// worktree is compared in full.
const syncTimeout = 10 * time.Second

// inotify watches every directory of the worktrees with one inotify
// instance, read by one goroutine. A drain first writes a new sequence
// number into a file of its own directory (syncDir) and waits until the
// goroutine has seen that write: inotify queues events in order, so
// everything done before is then known. (The file is rewritten, not
// created: creating files is what costs most on the file systems seen.)
type inotify struct {
	fd      int
	file    *os.File
	syncDir string
	syncWD  int32
	done    chan struct{}

	mu    sync.Mutex
	cond  *sync.Cond
	dirs  map[int32]watched
	marks map[*tree]*touched
	seq   uint64 // last sync file created
	seen  uint64 // last sync file seen
	dead  error  // why the reading goroutine stopped
	limit int    // if positive, watches beyond this many fail (tests)
}

// watched is a watched directory: rel in t's worktree.
type watched struct {
	t   *tree
	rel string
}

// newFeed returns an inotify feed, or the stat walk if inotify fails.
func newFeed(syncDir string) feed {
	w, err := startInotify(syncDir)
	if err != nil {
		return walkFeed{}
	}
	return w
}

func startInotify(syncDir string) (*inotify, error) {
	if err := os.MkdirAll(syncDir, 0o755); err != nil {
		return nil, err
	}
	// A sequence file left by an earlier Manager holds a larger number,
	// which writeSeq does not truncate: start from none.
	if err := os.Remove(filepath.Join(syncDir, syncFile)); err != nil && !missing(err) {
		return nil, err
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	wd, err := syscall.InotifyAddWatch(fd, syncDir, syscall.IN_CLOSE_WRITE|syscall.IN_ONLYDIR)
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	w := &inotify{
		fd: fd, file: os.NewFile(uintptr(fd), "inotify"), syncDir: syncDir, syncWD: int32(wd),
		done: make(chan struct{}), dirs: map[int32]watched{}, marks: map[*tree]*touched{},
	}
	w.cond = sync.NewCond(&w.mu)
	go w.loop()
	return w, nil
}

func (w *inotify) watch(t *tree) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.marks[t]
	if m == nil {
		m = &touched{paths: map[string]struct{}{}}
		w.marks[t] = m
	}
	w.addDirs(t, m, "", false)
	return nil
}

func (w *inotify) drain(t *tree) touched {
	ok := w.sync()
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.marks[t]
	if m == nil {
		return touched{full: true}
	}
	out := *m
	*m = touched{paths: map[string]struct{}{}}
	out.full = out.full || !ok
	return out
}

func (w *inotify) close() error {
	err := w.file.Close()
	<-w.done
	return err
}

// sync returns once the goroutine has handled every event queued before
// the call, or false if it cannot tell.
func (w *inotify) sync() bool {
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	if err := writeSeq(filepath.Join(w.syncDir, syncFile), seq); err != nil {
		return false
	}
	deadline := time.Now().Add(syncTimeout)
	wake := time.AfterFunc(syncTimeout, func() {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer wake.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.seen < seq && w.dead == nil && time.Now().Before(deadline) {
		w.cond.Wait()
	}
	return w.seen >= seq
}

// loop reads events until the inotify file is closed.
func (w *inotify) loop() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.file.Read(buf)
		w.mu.Lock()
		if err != nil {
			w.dead = err
			for _, m := range w.marks {
				m.full = true
			}
		} else {
			w.parse(buf[:n])
		}
		w.cond.Broadcast()
		w.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// parse handles the events in b, as read from the inotify file.
func (w *inotify) parse(b []byte) {
	for len(b) >= syscall.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		end := syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:]))
		if end > len(b) {
			return
		}
		name := strings.TrimRight(string(b[syscall.SizeofInotifyEvent:end]), "\x00")
		b = b[end:]
		w.handle(wd, mask, name)
	}
}

// handle records one event; w.mu is held.
func (w *inotify) handle(wd int32, mask uint32, name string) {
	if mask&syscall.IN_Q_OVERFLOW != 0 {
		for _, m := range w.marks {
			m.full = true
		}
		return
	}
	if wd == w.syncWD {
		if name != syncFile {
			return
		}
		if seq := readSeq(filepath.Join(w.syncDir, syncFile)); seq > w.seen {
			w.seen = seq
		}
		return
	}
	d, ok := w.dirs[wd]
	m := w.marks[d.t]
	if !ok || m == nil {
		return
	}
	if mask&syscall.IN_IGNORED != 0 || name == "" {
		w.self(wd, d, m, mask)
		return
	}
	p := join(d.rel, name)
	m.paths[p] = struct{}{}
	if top, _ := excludedTop(p); mask&syscall.IN_ISDIR == 0 || top != "" {
		return
	}
	if mask&(syscall.IN_DELETE|syscall.IN_MOVED_FROM) != 0 {
		m.gone = append(m.gone, p)
	}
	if mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0 {
		w.addDirs(d.t, m, p, true)
	}
}

// self handles an event about a watched directory itself: its parent
// reports what happened to it, unless it is the top of the worktree.
func (w *inotify) self(wd int32, d watched, m *touched, mask uint32) {
	if mask&syscall.IN_IGNORED != 0 {
		delete(w.dirs, wd)
	}
	if d.rel == "" && mask&(syscall.IN_IGNORED|syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0 {
		m.full = true
	}
}

// addDirs watches directory rel of t's worktree and the directories below
// it, except excluded ones. With mark, every entry found is marked touched:
// it may have been written before its directory was watched. When a watch
// cannot be added (no watches left), the worktree is marked for a full
// comparison.
func (w *inotify) addDirs(t *tree, m *touched, rel string, mark bool) {
	abs := filepath.Join(t.dir, filepath.FromSlash(rel))
	wd, err := syscall.InotifyAddWatch(w.fd, abs, watchMask)
	if err == nil && w.limit > 0 && len(w.dirs) >= w.limit {
		syscall.InotifyRmWatch(w.fd, uint32(wd))
		err = syscall.ENOSPC
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			m.full = true
		}
		return
	}
	w.dirs[int32(wd)] = watched{t: t, rel: rel}
	entries, err := readDir(t.r, rel)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := join(rel, e.Name())
		if mark {
			m.paths[p] = struct{}{}
		}
		if top, _ := excludedTop(p); e.IsDir() && top == "" {
			w.addDirs(t, m, p, mark)
		}
	}
}

// writeSeq writes seq into the file name. Sequence numbers only grow, so
// the file is never truncated: its content is always the last one written.
func writeSeq(name string, seq uint64) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.FormatUint(seq, 10))
	return errors.Join(err, f.Close())
}

// readSeq returns the sequence number in the file name, 0 if none.
func readSeq(name string) uint64 {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0) // .loop is not out of agents' reach
	if err != nil {
		return 0
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	b, err := io.ReadAll(io.LimitReader(f, 32))
	if err != nil {
		return 0
	}
	seq, _ := strconv.ParseUint(string(b), 10, 64)
	return seq
}

// readDir lists directory rel of r ("" for the top).
func readDir(r *os.Root, rel string) ([]fs.DirEntry, error) {
	f, err := r.OpenFile(cmp.Or(rel, "."), os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0) // a FIFO fails, never blocks
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
