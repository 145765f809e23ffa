package process

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// maxSweepRounds bounds how often a sweep scans /proc: processes that keep
// forking faster than they are killed make it give up with an error.
const maxSweepRounds = 200

// maxDoubts bounds the rounds a sweep repeats only because a line of
// ancestors could not be followed: a parent this process cannot see
// (/proc mounted with hidepid) breaks a line for good.
const maxDoubts = 2

// maxSweepPause is the longest pause between two rounds that made no
// progress (killed processes that have not died yet).
const maxSweepPause = 20 * time.Millisecond

// sweep is Sweep on Linux; live holds the pids of running leaders. With
// thorough set, every round reads every process in /proc; otherwise only
// the part of the tree below this process, through the children files
// (fast, but the kernel may leave out a process while another child is
// being reaped: Sweep, which callers use before measuring, is thorough).
func sweep(live map[int]bool, thorough bool) error {
	self := os.Getpid()
	own, err := unix.Getsid(0)
	if err != nil {
		return fmt.Errorf("process: sweep: own session: %w", err)
	}
	pause := time.Millisecond
	var killed map[int]uint64 // pid → start time of the process signalled
	doubts := 0               // rounds that found nothing but a broken line
	var left []int
	for range maxSweepRounds {
		procs, err := scan(self, own, live, thorough)
		if err != nil {
			return fmt.Errorf("process: sweep: %w", err)
		}
		if _, ok := procs[self]; !ok {
			return errors.New("process: sweep: /proc does not show this process")
		}
		var uncertain bool
		left, uncertain = escapees(procs, self, own, live)
		if len(left) == 0 && (!uncertain || doubts >= maxDoubts) {
			return nil
		}
		if len(left) == 0 {
			doubts++ // a line broken by a process that exited: look again
			continue
		}
		if killed == nil {
			killed = map[int]uint64{}
		}
		progress := false
		for _, pid := range left {
			progress = finish(pid, procs[pid], self, killed) || progress
		}
		if !progress {
			time.Sleep(pause)
			pause = min(2*pause, maxSweepPause)
		}
	}
	return fmt.Errorf("process: %d processes that children left behind are still running after %d attempts to kill them (pids %v)",
		len(left), maxSweepRounds, left)
}

// scan reads the processes a sweep round looks at: the part of the tree
// below self, or every process when thorough is set or the kernel has no
// children files.
func scan(self, own int, live map[int]bool, thorough bool) (map[int]procStat, error) {
	if !thorough {
		if procs, ok := treeProcs(self, own, live); ok {
			return procs, nil
		}
	}
	return allProcs()
}

// escapees returns the processes in procs to kill or reap: the
// descendants of self whose whole line of ancestors below self is outside
// self's session (own) and holds no live leader. uncertain reports a line
// that could not be followed (a process exited during the scan), so
// another round is due.
func escapees(procs map[int]procStat, self, own int, live map[int]bool) (left []int, uncertain bool) {
	l := lines{procs: procs, verdict: map[int]bool{}, self: self, own: own, live: live}
	for pid := range procs {
		if pid == self {
			continue
		}
		escapee, known := l.follow(pid)
		uncertain = uncertain || !known
		if escapee {
			left = append(left, pid)
		}
	}
	return left, uncertain
}

// lines follows lines of ancestors for escapees.
type lines struct {
	procs     map[int]procStat
	verdict   map[int]bool // pid → whether it is an escapee, for processes already followed
	self, own int
	live      map[int]bool
}

// follow says whether pid is an escapee; known is false when its line
// could not be followed.
func (l lines) follow(pid int) (escapee, known bool) {
	if v, ok := l.verdict[pid]; ok {
		return v, true
	}
	s, ok := l.procs[pid]
	switch {
	case !ok:
		return false, false
	case s.sid == l.own || l.live[pid] || l.live[s.sid] || s.ppid <= 1 && l.self != 1:
		// own session, a live leader, or a process in a live leader's
		// session: handed to this process when its leader exited, it is
		// that leader's Run's to end, which may still be giving its group
		// the grace (its sweep kills it once the leader is forgotten).
		// A session's id is not reused while any process holds it.
		return false, true
	case s.ppid == l.self:
		return true, true
	}
	v, known := l.follow(s.ppid)
	if known {
		l.verdict[pid] = v
	}
	return v, known
}

// finish kills the escapee pid, which the scan saw as s, unless it has
// exited or was killed before (killed records those), and reaps it if it
// is a child of self. It reports whether it changed anything.
func finish(pid int, s procStat, self int, killed map[int]uint64) bool {
	changed := false
	if start, ok := killed[pid]; !s.gone() && (!ok || start != s.start) && kill(pid, s) {
		killed[pid], changed = s.start, true
	}
	if s.ppid == self {
		var ws unix.WaitStatus
		if got, _ := unix.Wait4(pid, &ws, unix.WNOHANG, nil); got == pid {
			changed = true
		}
	}
	return changed
}

// kill sends SIGKILL to pid if it is still the process the scan saw as s.
// os.FindProcess holds a pidfd where the kernel has them (Linux 5.3), and
// the identity is checked after it was opened, so that a pid reused in
// between is never signalled; without pidfds the check comes just before
// kill(2).
func kill(pid int, s procStat) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	defer p.Release()
	if now, ok := readStat(pid); !ok || now.start != s.start {
		return false // gone, or the pid is another process's now
	}
	return p.Signal(os.Kill) == nil
}
