package process

import (
	"os/exec"
	"sync"
	"sync/atomic"
)

// guard is the process-wide setup of Guard, done once.
var guard struct {
	once sync.Once
	err  error
}

// Guard prepares this process to run untrusted children; Run calls it
// before its first start, and a program calls it first thing so that a
// failure stops it before anything runs. It is idempotent and safe for
// concurrent use; it returns the first call's error every time.
//
// On Linux it makes this process:
//
//   - a child subreaper (PR_SET_CHILD_SUBREAPER), so that whatever a child
//     leaves behind — a daemon that forked twice and called setsid —
//     is reparented to this process instead of init, where Run's sweep
//     finds it and kills it;
//   - not dumpable (PR_SET_DUMPABLE 0), so that a process of the same user
//     cannot read its memory or its environment through /proc, nor attach
//     to it, without CAP_SYS_PTRACE;
//
// and, unless the process is Confined already (see Exec), it forks every
// child on a thread of its own that first drops from its capability
// bounding, inheritable and ambient sets the capabilities that would let
// a child read this process's memory or the kernel's anyway (see
// droppedCaps), and ends after the fork. Children inherit that thread's sets,
// and a capability gone from the bounding set never comes back, not even
// through a setuid program. When this process is root and cannot drop
// them, Guard fails. An unprivileged process has nothing to drop there.
//
// The effects are process-wide, which is why a library calls Guard only
// through Run. Elsewhere than on Linux, Guard does nothing.
func Guard() error {
	guard.once.Do(func() { guard.err = setup() })
	return guard.err
}

// live is the registry of the leaders of running Runs: a leader is live
// from its start until its Wait has returned. A sweep spares them,
// everything below them, and the processes of their sessions (handed to
// this process once the leader has exited, while its Run still ends
// them). Starting a leader holds starts for reading, from before the fork
// until the leader is registered, and a sweep holds it for writing while
// it scans and kills, so that a leader being started is never mistaken
// for an escaped process, while leaders start side by side.
var live = struct {
	starts sync.RWMutex
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startLeader starts cmd and registers it as live.
func startLeader(cmd *exec.Cmd) error {
	live.starts.RLock()
	defer live.starts.RUnlock()
	if err := spawn(cmd); err != nil {
		return err
	}
	live.Lock()
	live.pids[cmd.Process.Pid] = true
	live.Unlock()
	return nil
}

// forget removes a leader from the registry once its Wait has returned.
func forget(pid int) {
	live.Lock()
	delete(live.pids, pid)
	live.Unlock()
}

// Sweep kills every process that a child of Run left behind: every
// descendant of this process that is in a session other than this
// process's and is neither below the leader of a Run still in progress
// nor in that leader's session, and it
// reaps those that were reparented to this process. It repeats until none
// is left, so a process that keeps forking cannot outrun it, and gives up
// with an error after a bounded number of rounds.
//
// Run sweeps after every child; call Sweep before measuring anything an
// agent could influence. Processes in this process's own session — the
// children other code started with os/exec — are never touched, and no
// child is ever reaped that Run or os/exec waits for. Without Guard (or
// elsewhere than on Linux) Sweep finds only what is still below this
// process.
func Sweep() error {
	return sweepLive(true)
}

// sharedSweeps lets Runs whose children end together share their sweeps:
// Run must sweep after its child has exited, and any sweep that starts
// after that serves it as well as one of its own. Ten children ending
// within a few milliseconds then cost two or three sweeps, one after
// another, instead of ten, each holding off every start
// (docs/performance.md). A sweep already running never serves a Run that
// arrives after it started.
type sharedSweeps struct {
	sweep    func() error
	running  sync.Mutex   // held by the sweep under way; guards finished and err
	started  atomic.Int64 // the number of sweeps started
	finished int64        // the number of the last sweep finished
	err      error        // its result
}

// runSweeps are the sweeps Run does after its children.
var runSweeps = &sharedSweeps{sweep: func() error { return sweepLive(false) }}

// after sweeps, or returns the result of a sweep that started after it
// was called.
func (s *sharedSweeps) after() error {
	next := s.started.Load() + 1 // the first sweep that starts from now on
	s.running.Lock()
	defer s.running.Unlock()
	if s.finished >= next {
		return s.err
	}
	n := s.started.Add(1)
	s.err, s.finished = s.sweep(), n
	return s.err
}

// sweepLive sweeps with the registry locked and no leader starting; see
// sweep.
func sweepLive(thorough bool) error {
	live.starts.Lock()
	defer live.starts.Unlock()
	live.Lock()
	defer live.Unlock()
	return sweep(live.pids, thorough)
}
