package process

import (
	"os/exec"
	"sync"
	"time"
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
// and, unless the process is Confined already (see Exec), it starts the
// few threads on which every child is forked, each of which first drops
// from its capability bounding, inheritable and ambient sets the
// capabilities that would let a child read this process's memory or the
// kernel's anyway (see droppedCaps). Children inherit that thread's sets,
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
// this process once the leader has exited, while its Run still ends them). Starting a leader holds starts for reading, from
// before the fork until the leader is registered, and a sweep holds it for
// writing while it scans and kills, so that a leader being started is
// never mistaken for an escaped process, while leaders start side by side.
// starting counts the starts under way, so that a sweep can wait for a
// moment when there is none (lockStarts).
var live = struct {
	starts sync.RWMutex
	sync.Mutex
	pids     map[int]bool
	starting int
	changed  chan struct{} // closed, and replaced, whenever a leader leaves pids or a start ends
}{pids: map[int]bool{}, changed: make(chan struct{})}

// startsWait bounds how long a sweep waits for a moment when no leader is
// being started before it holds new starts off anyway (a variable for
// tests).
var startsWait = 50 * time.Millisecond

// startLeader starts cmd on a spawning thread and registers it as live.
func startLeader(cmd *exec.Cmd) error {
	live.Lock()
	live.starting++
	live.Unlock()
	defer startEnded() // after RUnlock: a sweep woken then can lock
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

// startEnded records that a start is over, and wakes whoever waits.
func startEnded() {
	live.Lock()
	live.starting--
	notifyLocked()
	live.Unlock()
}

// notifyLocked wakes whoever waits for live to change; live is locked.
func notifyLocked() {
	close(live.changed)
	live.changed = make(chan struct{})
}

// forget removes a leader from the registry once its Wait has returned.
func forget(pid int) {
	live.Lock()
	delete(live.pids, pid)
	notifyLocked()
	live.Unlock()
}

// noneLive waits until no leader is live, or d has passed.
func noneLive(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		live.Lock()
		n, changed := len(live.pids), live.changed
		live.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-t.C:
			return
		}
	}
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

// sweepLive sweeps with the registry locked and no leader starting; see
// sweep.
func sweepLive(thorough bool) error {
	lockStarts()
	defer unlockStarts()
	live.Lock()
	defer live.Unlock()
	return sweep(live.pids, thorough)
}

// lockStarts holds off new starts for a sweep. A start holds starts until
// its child has executed, which on a busy machine takes milliseconds; a
// sweep that merely waited for the lock would hold off every start behind
// the ones under way all that time. So it first waits, up to startsWait,
// for a moment when no start is under way, and takes the lock then.
func lockStarts() {
	deadline := time.NewTimer(startsWait)
	defer deadline.Stop()
	for {
		live.Lock()
		n, changed := live.starting, live.changed
		live.Unlock()
		if n == 0 && live.starts.TryLock() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			live.starts.Lock()
			return
		}
	}
}

// unlockStarts lets starts through again, and wakes a sweep that waits.
func unlockStarts() {
	live.starts.Unlock()
	live.Lock()
	notifyLocked()
	live.Unlock()
}
