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

// Spec describes one child process to run.
type Spec struct {
	// Argv is the command and its arguments; it must not be empty. A name
	// without a slash is resolved by os/exec with exec.LookPath semantics,
	// which consult the PATH of the calling process (not Env); a relative
	// path with a slash is relative to Dir. No shell is ever added.
	Argv []string
	// Dir is the working directory; "" means the caller's.
	Dir string
	// Env is the complete environment of the child; nil means os/exec gives
	// it the environment of the calling process.
	Env []string
	// Stdin is copied to the child's stdin, which is closed at EOF. Nil means
	// empty stdin (the null device), never the parent's stdin. An *os.File is
	// handed to the child directly. Run waits at most about a second after
	// the process group is gone for the copy to finish; a reader still
	// blocked in Read then is abandoned and keeps being read by a goroutine
	// until that Read returns.
	Stdin io.Reader
	// Timeout, when positive, bounds the run: once it elapses the group is
	// terminated and Result.TimedOut is set. Zero (or negative) means no
	// timeout of our own; ctx may still carry a deadline.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL to the group when a
	// run is cut short; zero (or negative) means DefaultKillGrace.
	KillGrace time.Duration
	// TailBytes is how many bytes of the combined stdout+stderr tail are
	// kept; zero (or negative) means DefaultTailBytes.
	TailBytes int
	// StdoutBytes is how many bytes of stdout are kept (the last ones); zero
	// (or negative) means DefaultStdoutBytes.
	StdoutBytes int
	// StdoutTee, when non-nil, receives every stdout byte as it arrives
	// (e.g. a log file). It is written from the draining goroutine and should
	// not block. After its first error it is no longer written to, draining
	// carries on, and the error is reported in Result.TeeErr.
	StdoutTee io.Writer
}

// Result reports how a run ended. When a run is cut short, TimedOut and
// Canceled tell why, and ExitCode/Signal tell how the process reacted.
type Result struct {
	// ExitCode is the exit status, or -1 when the process did not exit
	// normally (killed by a signal, never started, or could not be waited for).
	ExitCode int
	// Signal names the signal that ended the process ("killed",
	// "terminated", ...), or "" when it exited normally.
	Signal string
	// TimedOut reports that Spec.Timeout elapsed and Run terminated the group.
	TimedOut bool
	// Canceled reports that ctx was cancelled or its deadline passed, and Run
	// terminated the group (or did not start the process). TimedOut and
	// Canceled are never both set: whichever Run observed first wins; if both
	// fire at essentially the same instant either may be reported.
	Canceled bool
	// StartErr is non-nil when the process was not started: empty Argv,
	// executable not found or not executable, bad Dir, or ctx already done.
	StartErr error
	// WaitErr is non-nil when waiting for the started process failed, which
	// should never happen (e.g. the caller made SIGCHLD ignored).
	WaitErr error
	// TeeErr is the first error returned by Spec.StdoutTee, if any.
	TeeErr error
	// SweepErr is non-nil when processes the child (or another child) left
	// behind could not all be killed after it exited; see Sweep.
	SweepErr error
	// Duration is the wall time from starting the process until it was
	// reaped (it does not include draining pipes afterwards).
	Duration time.Duration
	// Stdout holds the last Spec.StdoutBytes bytes of stdout.
	Stdout []byte
	// StdoutTruncated reports that stdout was longer than Spec.StdoutBytes.
	StdoutTruncated bool
	// Tail holds the last Spec.TailBytes bytes of stdout and stderr,
	// interleaved in the order Run read them.
	Tail []byte
	// OutputBytes is the total number of bytes read from stdout and stderr.
	OutputBytes int64
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
