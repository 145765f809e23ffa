package process

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"

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
func parseStat(stat []byte) (procStat, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(stat[i+1:])) // state ... starttime ...
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	s := procStat{state: f[0][0]}
	var err [4]error
	s.ppid, err[0] = strconv.Atoi(f[1])
	s.pgrp, err[1] = strconv.Atoi(f[2])
	s.sid, err[2] = strconv.Atoi(f[3])
	s.start, err[3] = strconv.ParseUint(f[19], 10, 64)
	return s, err[0] == nil && err[1] == nil && err[2] == nil && err[3] == nil
}

// readStat reads the stat of pid; ok is false when it is gone.
func readStat(pid int) (procStat, bool) {
	var buf [512]byte // comm is at most 64 bytes, and the fields that follow fit
	b, err := readProc("/proc/"+strconv.Itoa(pid)+"/stat", buf[:0])
	if err != nil {
		return procStat{}, false
	}
	return parseStat(b)
}

// readProc appends the file of /proc at path to buf. It reads with plain
// system calls, three for a small file where os.ReadFile makes six: a
// sweep after every child reads a few dozen such files
// (docs/performance.md).
func readProc(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return buf, err
		}
		buf = buf[:len(buf)+n]
	}
}

// numbers lists the names in directory dir that are numbers: /proc's
// processes, or a process's threads.
func numbers(dir string) ([]int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	var ns []int
	for _, name := range names {
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			ns = append(ns, n)
		}
	}
	return ns, err
}

// allProcs reads the stat of every process in /proc.
func allProcs() (map[int]procStat, error) {
	pids, err := numbers("/proc")
	if err != nil {
		return nil, err
	}
	procs := make(map[int]procStat, len(pids))
	for _, pid := range pids {
		if s, ok := readStat(pid); ok {
			procs[pid] = s
		}
	}
	return procs, nil
}

// liveMembers reports whether a process of group pgid is still running,
// reading /proc: unlike kill(-pgid, 0) it does not count zombies, which a
// slow or absent init (PID 1 in a container) may never reap. ok is false
// when /proc cannot be read.
func liveMembers(pgid int) (alive, ok bool) {
	procs, err := allProcs()
	if err != nil {
		return false, false
	}
	for _, s := range procs {
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

// treeProcs reads, top down through the children files of /proc, self,
// its children, and everything below those of them that are outside own's
// session and not live leaders: what a sweep after one child needs, a few
// files where allProcs reads one per process. ok is false when the kernel
// has no children files.
func treeProcs(self, own int, live map[int]bool) (procs map[int]procStat, ok bool) {
	if !childrenFiles() {
		return nil, false
	}
	procs = map[int]procStat{}
	if s, found := readStat(self); found {
		procs[self] = s
	}
	kids := children(self, nil)
	for i := 0; i < len(kids); i++ {
		pid := kids[i]
		if _, seen := procs[pid]; seen || live[pid] {
			continue // a live leader is never swept, nor anything below it: no need to read it
		}
		s, found := readStat(pid)
		if !found {
			continue // gone
		}
		procs[pid] = s
		if s.ppid == self && s.sid == own {
			continue // never swept: no need to look below
		}
		kids = children(pid, kids)
	}
	return procs, true
}

// children appends to kids the children of pid: those of each of its
// threads (none when it is gone).
func children(pid int, kids []int) []int {
	task := "/proc/" + strconv.Itoa(pid) + "/task/"
	tids, _ := numbers(task)
	for _, tid := range tids {
		var buf [512]byte
		b, _ := readProc(task+strconv.Itoa(tid)+"/children", buf[:0])
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

// awaitExit blocks until p has exited and leaves it unreaped, a zombie:
// until cmd.Wait reaps it, its pid — and so the id of the group it leads —
// cannot be given to another process, and the group can be signalled
// without hitting a stranger. It reports false when it could not wait
// (the caller then reaps first).
func awaitExit(p *os.Process) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}
