// Package process runs the child processes of loop-action's gate checks,
// metrics commands and agent CLIs, and reports exactly what happened: each
// child leads a new session (and so a new process group), its stdin is fed
// and its stdout and stderr drained concurrently into bounded buffers (a
// child printing gigabytes costs a fixed amount of memory), a timeout or a
// done context signals the whole group (SIGTERM, then SIGKILL after a
// grace period), and a pipe held open by a stray descendant never hangs it.
//
// Children are untrusted code, so it also owns containment. No process a
// child starts outlives it: [Guard] makes this process a child subreaper,
// so that whatever a child leaves behind (even a daemon that forked twice
// and called setsid) is reparented here, and after every child Run kills
// its group and then sweeps ([Sweep]) every descendant outside this
// process's session that is not below a child still running. And no child
// reads this process's memory or environment: Guard makes it undumpable
// and forks every child from threads without the capabilities that would
// read them anyway ([Confined], [Exec]). Neither os/exec nor a library
// does either; what os/exec and the os package do (pipes, copying, the
// pidfd under os.Process) is theirs.
//
// It must never interpret output (callers do), never run a shell
// implicitly (Spec.Argv runs as given; ShellArgv asks for /bin/sh -c),
// never read environment variables itself (Spec.Env is passed through),
// and never touch a process in this process's own session: those are the
// children other code starts with os/exec and waits for itself, so other
// code must not start children outside this session except through Run.
//
// Sessions, the subreaper and the sweep need Linux; other unix systems get
// sessions and group kills but no sweep; elsewhere a timeout kills only
// the direct child.
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Defaults applied by Run to zero (or negative) Spec fields.
const (
	DefaultKillGrace   = 2 * time.Second // Spec.KillGrace
	DefaultTailBytes   = 64 << 10        // Spec.TailBytes
	DefaultStdoutBytes = 1 << 20         // Spec.StdoutBytes
)

// drainWait bounds how long Run waits, after the process group is gone and
// the sweep is done, for the output pipes to reach EOF and for the stdin
// copier to finish. Only a process the sweep could not see (no subreaper:
// not Linux) or kill, or a Spec.Stdin blocked in Read, can hold things up
// that long.
const drainWait = time.Second

// groupPollInterval is how often Run checks, during a termination, whether
// the group has emptied after its leader exited.
const groupPollInterval = 20 * time.Millisecond

// Spec describes one child process to run. Zero (or negative) limits
// mean their defaults.
type Spec struct {
	// Argv is the command and its arguments; it must not be empty. A name
	// without a slash is looked up on the PATH of the calling process (not
	// Env), as exec.LookPath does; a relative path with a slash is relative
	// to Dir. No shell is ever added.
	Argv []string
	Dir  string   // the working directory; "" means the caller's
	Env  []string // the child's whole environment; nil means the calling process's
	// Stdin is copied to the child's stdin, which is closed at EOF; an
	// *os.File is handed over directly. Nil means the null device, never
	// the parent's stdin. Run waits at most about a second after the group
	// is gone for the copy to finish; a Read still blocked then is left to
	// a goroutine until it returns.
	Stdin       io.Reader
	Timeout     time.Duration // when positive, the group is terminated once it elapses (Result.TimedOut)
	KillGrace   time.Duration // between SIGTERM and SIGKILL to the group of a run cut short
	TailBytes   int           // how many bytes of the combined stdout+stderr tail are kept
	StdoutBytes int           // how many bytes of stdout are kept (the last ones)
	// StdoutTee, when non-nil, receives every stdout byte as it arrives,
	// from the draining goroutine: it should not block. After its first
	// error it is no longer written to (Result.TeeErr); draining carries on.
	StdoutTee io.Writer
}

// Result reports how a run ended: when it was cut short, TimedOut and
// Canceled tell why, and ExitCode and Signal how the process reacted.
type Result struct {
	ExitCode int    // the exit status; -1 when the process did not exit normally
	Signal   string // the signal that ended it ("killed", "terminated"...), "" when it exited
	TimedOut bool   // Spec.Timeout elapsed and Run terminated the group
	// Canceled reports that ctx was done, and Run terminated the group or
	// did not start the process. It is never set with TimedOut: whichever
	// Run observed first wins.
	Canceled bool
	StartErr error // why the process was not started (empty Argv, not found, bad Dir, ctx done)
	WaitErr  error // why waiting for it failed, which should never happen (SIGCHLD ignored)
	TeeErr   error // the first error of Spec.StdoutTee
	SweepErr error // what the child (or another) left behind could not all be killed (Sweep)
	// Duration is the wall time from the start until the process was
	// reaped, draining the pipes after it not included.
	Duration        time.Duration
	Stdout          []byte // the last Spec.StdoutBytes bytes of stdout
	StdoutTruncated bool   // stdout was longer than that
	Tail            []byte // the last Spec.TailBytes bytes of stdout and stderr, in the order read
	OutputBytes     int64  // all the bytes read from stdout and stderr
}

// OK reports whether the process was started, exited with status 0 on its
// own, was neither timed out nor cancelled, and left nothing running.
func (r Result) OK() bool {
	return r.ExitCode == 0 && r.StartErr == nil && r.WaitErr == nil && r.SweepErr == nil && !r.TimedOut && !r.Canceled
}

// Run starts spec.Argv as the leader of a new session and process group,
// and waits for it. It calls Guard first and does not start anything if
// Guard fails.
//
// While it runs, stdout and stderr are drained concurrently into bounded
// buffers. If spec.Timeout elapses or ctx is done first, the whole group gets
// SIGTERM, and SIGKILL once spec.KillGrace has passed; Run does not wait the
// grace out once the leader has exited and the group is empty (members that
// have exited but not yet been reaped still count). After the leader has
// exited, for any reason, whatever is left of its group is killed with
// SIGKILL (on Linux every signal to the group goes out before the leader
// is reaped, while no other process can have its pid and so the group's
// id), and then Sweep kills whatever left the group, so that nothing the
// child started survives Run. Runs whose children end together share that
// sweep: one that starts after each of their children had exited. Run then waits at most about a second more
// for the output pipes, which only a process Sweep could not kill can still
// hold open.
//
// Run never panics on bad input and always returns a Result; it reports a
// failure to start in Result.StartErr. Every goroutine it starts has ended
// when it returns, except a stdin copier blocked in spec.Stdin's Read.
func Run(ctx context.Context, spec Spec) Result {
	spec = withDefaults(spec)
	if len(spec.Argv) == 0 {
		return notStarted(errors.New("process: empty argv"))
	}
	if err := ctx.Err(); err != nil {
		res := notStarted(fmt.Errorf("process: not starting %s: %w", spec.Argv[0], err))
		res.Canceled = true
		return res
	}
	r := newRun(spec)
	began := time.Now()
	if err := r.start(); err != nil {
		return notStarted(startError(spec, err))
	}
	timedOut, canceled, waitErr := r.wait(ctx)
	duration := time.Since(began)
	forget(r.cmd.Process.Pid)
	sweepErr := runSweeps.after() // before draining: escapees holding the pipes die
	r.finishIO()
	res := r.result(waitErr)
	res.TimedOut, res.Canceled, res.Duration, res.SweepErr = timedOut, canceled, duration, sweepErr
	return res
}

// withDefaults fills in the zero (or negative) fields of spec.
func withDefaults(spec Spec) Spec {
	if spec.KillGrace <= 0 {
		spec.KillGrace = DefaultKillGrace
	}
	if spec.TailBytes <= 0 {
		spec.TailBytes = DefaultTailBytes
	}
	if spec.StdoutBytes <= 0 {
		spec.StdoutBytes = DefaultStdoutBytes
	}
	return spec
}

// notStarted is the Result of a process that was never started.
func notStarted(err error) Result {
	return Result{ExitCode: -1, StartErr: err}
}

// startError wraps the error of a failed start. A bad working directory is
// reported by os/exec as if the executable were missing, so Dir is checked
// to say what actually went wrong.
func startError(spec Spec, err error) error {
	if spec.Dir != "" {
		info, serr := os.Stat(spec.Dir)
		if serr == nil && !info.IsDir() {
			serr = fmt.Errorf("%s is not a directory", spec.Dir)
		}
		if serr != nil {
			return fmt.Errorf("process: start %s: working directory: %w", spec.Argv[0], serr)
		}
	}
	return fmt.Errorf("process: start %s: %w", spec.Argv[0], err)
}
