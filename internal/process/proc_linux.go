package process

import (
	"bytes"
	"errors"
	"os"
	"strconv"

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
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
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

// readStat reads the stat of pid; ok is false when it is gone.
func readStat(pid int) (procStat, bool) {
	var buf [1024]byte // comm is at most 64 bytes; the fields that follow fit
	return readStatInto(pid, buf[:])
}

// readStatInto is readStat with the caller's buffer: a sweep reads every
// process's stat, so it costs three system calls and no allocation.
func readStatInto(pid int, buf []byte) (procStat, bool) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	return parseStat(buf[:n])
}

// scanProcs reads the stat of every process in /proc.
func scanProcs() (map[int]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	procs := make(map[int]procStat, len(names))
	var buf [1024]byte
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if s, ok := readStatInto(pid, buf[:]); ok {
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
	procs, err := scanProcs()
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

// scanTree reads, top down through the children files of /proc, self, its
// children, and everything below those of them that are outside own's
// session and not live leaders: what a sweep needs. It reads a few files
// where scanProcs reads one per process. ok is false when the kernel has
// no children files (CONFIG_PROC_CHILDREN).
func scanTree(self, own int, live map[int]bool) (procs map[int]procStat, ok bool) {
	if _, err := os.Stat("/proc/thread-self/children"); err != nil {
		return nil, false
	}
	var buf [1024]byte
	procs = map[int]procStat{}
	if s, found := readStatInto(self, buf[:]); found {
		procs[self] = s
	}
	for kids := childrenOf(self); len(kids) > 0; {
		pid := kids[0]
		kids = kids[1:]
		if _, seen := procs[pid]; seen {
			continue
		}
		s, found := readStatInto(pid, buf[:])
		if !found {
			continue // gone
		}
		procs[pid] = s
		if s.ppid == self && (s.sid == own || live[pid]) {
			continue // never swept: no need to look below
		}
		kids = append(kids, childrenOf(pid)...)
	}
	return procs, true
}

// childrenOf lists the children of pid: those of each of its threads.
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	d, err := os.Open(dir)
	if err != nil {
		return nil // gone
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	var kids []int
	for _, tid := range tids {
		b, _ := os.ReadFile(dir + tid + "/children")
		for _, f := range bytes.Fields(b) {
			if n, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}
