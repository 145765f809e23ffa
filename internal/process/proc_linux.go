package process

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// procStat is what /proc/PID/stat says about a process.
type procStat struct {
	state byte   // R, S, D, T, Z, X...
	ppid  int    // parent
	pgrp  int    // process group
	sid   int    // session
	start uint64 // start time in clock ticks since boot: with the pid, an identity
}

// gone reports whether the process has exited (a zombie or dead).
func (s procStat) gone() bool { return s.state == 'Z' || s.state == 'X' }

// parseStat reads /proc/PID/stat: "pid (comm) state ppid pgrp session
// ...", where comm may hold spaces and ')', and starttime is field 22.
// It allocates nothing: a sweep parses every process's stat.
func parseStat(stat []byte) (procStat, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procStat{}, false
	}
	var f [20][]byte // state ... starttime
	n := 0
	for rest := stat[i+1:]; n < len(f); n++ {
		if f[n], rest = nextField(rest); f[n] == nil {
			break
		}
	}
	if n < len(f) || len(f[0]) != 1 {
		return procStat{}, false
	}
	s := procStat{state: f[0][0]}
	var errs [4]error
	s.ppid, errs[0] = strconv.Atoi(string(f[1]))
	s.pgrp, errs[1] = strconv.Atoi(string(f[2]))
	s.sid, errs[2] = strconv.Atoi(string(f[3]))
	s.start, errs[3] = strconv.ParseUint(string(f[19]), 10, 64)
	return s, errors.Join(errs[:]...) == nil
}

// nextField splits the first field, separated by white space, off b; field
// is nil when none is left.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	if i == j {
		return nil, nil
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// readStat reads the stat of pid; ok is false when it is gone.
func readStat(pid int) (procStat, bool) {
	sc := getScan()
	defer scans.Put(sc)
	return sc.stat(pid)
}

// procScan is what reading /proc needs, kept from one round of a sweep to
// the next, and from one sweep to the next (scans): a sweep reads every
// process, or the tree below this process, several times per iteration,
// so a round makes no garbage — the files are named and read in its
// buffers, the directories listed straight into one (getdents64), and the
// maps are cleared, not made anew.
type procScan struct {
	procs   map[int]procStat // what the round found
	verdict map[int]bool     // escapees' scratch: pid → whether it is one
	left    []int            // escapees' result
	kids    []int            // scanTree's queue
	dents   []byte           // a directory listing
	buf     []byte           // a stat or children file
	path    []byte           // the file's name, NUL-terminated
}

// scans are the procScans of sweeps and liveMembers.
var scans = sync.Pool{New: func() any {
	return &procScan{
		procs: map[int]procStat{}, verdict: map[int]bool{},
		dents: make([]byte, 8<<10), buf: make([]byte, 1024), path: make([]byte, 0, 64),
	}
}}

func getScan() *procScan { return scans.Get().(*procScan) }

// name sets sc.path to /proc/PID[/TID/rest], NUL-terminated; pid, and tid
// when not negative, are numbers, rest is appended last when not "".
func (sc *procScan) name(pid, tid int, rest string) []byte {
	p := append(sc.path[:0], "/proc/"...)
	if pid >= 0 {
		p = strconv.AppendInt(p, int64(pid), 10)
	}
	if tid >= 0 {
		p = append(p, "/task/"...)
		p = strconv.AppendInt(p, int64(tid), 10)
	}
	p = append(p, rest...)
	sc.path = append(p, 0)
	return sc.path
}

// open opens the NUL-terminated path p read-only, as unix.Open does with
// a string, which it would copy.
func open(p []byte, flags int) (int, error) {
	cwd := unix.AT_FDCWD
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&p[0])),
			uintptr(unix.O_RDONLY|unix.O_CLOEXEC|flags), 0, 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, errno
	}
}

// stat reads the stat of pid; ok is false when it is gone. Three system
// calls: comm is at most 64 bytes, and the fields that follow fit sc.buf.
func (sc *procScan) stat(pid int) (procStat, bool) {
	fd, err := open(sc.name(pid, -1, "/stat"), 0)
	if err != nil {
		return procStat{}, false
	}
	n, err := unix.Read(fd, sc.buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	return parseStat(sc.buf[:n])
}

// list calls each with every number among the names in directory path,
// which sc.name made: /proc's processes, or a process's threads. It lists
// into sc.dents, which each must not use.
func (sc *procScan) list(path []byte, each func(n int)) error {
	fd, err := open(path, unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, sc.dents)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		if err := eachNumber(sc.dents[:n], each); err != nil {
			return err
		}
	}
}

// eachNumber calls each with every entry of a getdents64 buffer whose name
// is a number.
func eachNumber(buf []byte, each func(n int)) error {
	for len(buf) >= 19 {
		reclen := int(buf[16]) | int(buf[17])<<8
		if reclen < 19 || reclen > len(buf) {
			return errors.New("readdirent: malformed directory entry")
		}
		name := buf[19:reclen]
		buf = buf[reclen:]
		if n, ok := number(name); ok {
			each(n)
		}
	}
	return nil
}

// number reads a name of digits, ended by NUL or by the end of b.
func number(b []byte) (int, bool) {
	n, digits := 0, 0
	for _, c := range b {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || digits >= 18 {
			return 0, false
		}
		n, digits = n*10+int(c-'0'), digits+1
	}
	return n, digits > 0
}

// all reads the stat of every process in /proc into sc.procs.
func (sc *procScan) all() error {
	clear(sc.procs)
	return sc.list(sc.name(-1, -1, ""), func(pid int) {
		if s, ok := sc.stat(pid); ok {
			sc.procs[pid] = s
		}
	})
}

// liveMembers reports whether a process of group pgid is still running,
// reading /proc: unlike kill(-pgid, 0) it does not count zombies, which a
// slow or absent init (PID 1 in a container) may never reap. ok is false
// when /proc cannot be read.
func liveMembers(pgid int) (alive, ok bool) {
	sc := getScan()
	defer scans.Put(sc)
	if err := sc.all(); err != nil {
		return false, false
	}
	for _, s := range sc.procs {
		if s.pgrp == pgid && !s.gone() {
			return true, true
		}
	}
	return false, true
}

// childrenFiles reports whether the kernel has /proc/PID/task/TID/children
// (CONFIG_PROC_CHILDREN), which does not change while this process runs.
var childrenFiles = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
})

// tree reads, top down through the children files of /proc, self, its
// children, and everything below those of them that are outside own's
// session and not live leaders, into sc.procs: what a sweep needs. It
// reads a few files where all reads one per process. It reports false
// when the kernel has no children files.
func (sc *procScan) tree(self, own int, live map[int]bool) bool {
	if !childrenFiles() {
		return false
	}
	clear(sc.procs)
	if s, found := sc.stat(self); found {
		sc.procs[self] = s
	}
	sc.kids = sc.children(self, sc.kids[:0])
	for i := 0; i < len(sc.kids); i++ {
		pid := sc.kids[i]
		if _, seen := sc.procs[pid]; seen || live[pid] {
			continue // a live leader is never swept, nor anything below it: no need to read it
		}
		s, found := sc.stat(pid)
		if !found {
			continue // gone
		}
		sc.procs[pid] = s
		if s.ppid == self && s.sid == own {
			continue // never swept: no need to look below
		}
		sc.kids = sc.children(pid, sc.kids)
	}
	return true
}

// children appends to kids the children of pid: those of each of its
// threads, listed once.
func (sc *procScan) children(pid int, kids []int) []int {
	_ = sc.list(sc.name(pid, -1, "/task/"), func(tid int) { // gone: none
		kids = sc.childrenOfThread(pid, tid, kids)
	})
	return kids
}

// childrenOfThread appends to kids the children of thread tid of pid,
// read whole into sc.buf (grown when a thread has many).
func (sc *procScan) childrenOfThread(pid, tid int, kids []int) []int {
	fd, err := open(sc.name(pid, tid, "/children"), 0)
	if err != nil {
		return kids // gone
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(sc.buf) {
			sc.buf = append(sc.buf, make([]byte, len(sc.buf))...)
		}
		m, err := unix.Read(fd, sc.buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	for rest := sc.buf[:n]; ; {
		var f []byte
		if f, rest = nextField(rest); f == nil {
			return kids
		}
		if k, ok := number(f); ok {
			kids = append(kids, k)
		}
	}
}
