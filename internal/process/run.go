package process

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// run is the state of one Run call.
type run struct {
	spec   Spec
	cmd    *exec.Cmd
	stdout *tailBuffer // last spec.StdoutBytes of stdout
	tail   *tailBuffer // last spec.TailBytes of stdout+stderr
	tee    teeWriter

	outR, errR *os.File // parent's read ends of stdout and stderr
	stdinW     *os.File // parent's write end of stdin; nil when not copying

	outDone, errDone, inDone chan struct{} // closed when each copier ends
}

// newRun prepares the state for running spec, whose defaults are filled in.
func newRun(spec Spec) *run {
	return &run{
		spec:    spec,
		stdout:  newTailBuffer(spec.StdoutBytes),
		tail:    newTailBuffer(spec.TailBytes),
		tee:     teeWriter{w: spec.StdoutTee},
		outDone: make(chan struct{}),
		errDone: make(chan struct{}),
		inDone:  make(chan struct{}),
	}
}

// start creates the pipes, starts the process and the copying goroutines.
// On error nothing is left running and every descriptor is closed.
func (r *run) start() error {
	r.cmd = exec.Command(r.spec.Argv[0], r.spec.Argv[1:]...)
	r.cmd.Dir, r.cmd.Env = r.spec.Dir, r.spec.Env
	setGroup(r.cmd)
	childEnds, err := r.openPipes()
	if err == nil {
		err = startLeader(r.cmd)
	}
	closeFiles(childEnds...) // the child has its own copies now
	if err != nil {
		closeFiles(r.outR, r.errR, r.stdinW)
		return err
	}
	go r.drain(r.outR, io.MultiWriter(r.stdout, r.tail, &r.tee), r.outDone)
	go r.drain(r.errR, r.tail, r.errDone)
	if r.stdinW != nil {
		go r.feedStdin()
	} else {
		close(r.inDone)
	}
	return nil
}

// openPipes creates the stdio pipes and wires the child's ends into r.cmd.
// It returns the child's ends, which the parent must close after Start.
func (r *run) openPipes() (childEnds []*os.File, err error) {
	var outW, errW, inR *os.File
	defer func() {
		if err != nil {
			closeFiles(r.outR, outW, r.errR, errW, inR, r.stdinW)
		}
	}()
	if r.outR, outW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if r.errR, errW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	r.cmd.Stdout, r.cmd.Stderr = outW, errW
	switch in := r.spec.Stdin.(type) {
	case nil: // os/exec connects the null device
	case *os.File:
		r.cmd.Stdin = in
	default:
		if inR, r.stdinW, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("stdin pipe: %w", err)
		}
		r.cmd.Stdin = inR
	}
	return []*os.File{outW, errW, inR}, nil
}

// drainBufs are the buffers the output copiers read into, shared between
// runs: io.Copy would allocate 32 KiB for each (through os.File.WriteTo),
// 64 KiB of garbage a child, which made Run cost ~15% more CPU than
// os/exec (docs/performance.md).
var drainBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// drain copies everything from f to w until EOF or until f is closed: a
// read error just ends the copy, and w never fails.
func (r *run) drain(f *os.File, w io.Writer, done chan<- struct{}) {
	defer close(done)
	bp := drainBufs.Get().(*[]byte)
	defer drainBufs.Put(bp)
	_, _ = io.CopyBuffer(w, struct{ io.Reader }{f}, *bp) // hides f's WriteTo, which would not use the buffer
}

// feedStdin copies spec.Stdin to the child and then closes its stdin. Write
// errors (EPIPE once the child stops reading, or the parent closing stdinW)
// end the copy and are not reported: the child's exit status says more.
func (r *run) feedStdin() {
	defer close(r.inDone)
	_, _ = io.Copy(r.stdinW, r.spec.Stdin)
	_ = r.stdinW.Close()
}

// wait waits for the leader to exit while the watcher terminates its group
// on timeout or cancellation, kills what is left of the group, and reaps
// the leader. On Linux the leader is reaped last: until then its pid, the
// group's id, cannot be reused, so neither the watcher nor the kill can
// signal another group.
func (r *run) wait(ctx context.Context) (timedOut, canceled bool, waitErr error) {
	w := r.watch(ctx)
	exited := awaitExit(r.cmd.Process)
	if !exited {
		waitErr = r.cmd.Wait()
	}
	timedOut, canceled = w.stop()
	killGroup(r.cmd.Process) // what the leader left behind in its group
	if exited {
		waitErr = r.cmd.Wait()
	}
	return timedOut, canceled, waitErr
}

// terminate sends SIGTERM to the group and SIGKILL once KillGrace has passed,
// unless the leader has exited and the group has emptied before that.
func (r *run) terminate(waitDone <-chan struct{}) {
	p := r.cmd.Process
	terminateGroup(p)
	grace := time.NewTimer(r.spec.KillGrace)
	defer grace.Stop()
	poll := time.NewTicker(groupPollInterval)
	defer poll.Stop()
	leaderGone := false
	for {
		select {
		case <-waitDone:
			leaderGone, waitDone = true, nil
		case <-poll.C:
		case <-grace.C:
			killGroup(p)
			_ = p.Kill() // in case the leader moved itself to another group
			return
		}
		if leaderGone && !groupAlive(p) {
			return
		}
	}
}

// finishIO closes the child's stdin and waits for the copiers. If they are
// not done within drainWait, a process outside the group holds a pipe (or
// Spec.Stdin blocks): the read ends are closed, which ends the output
// copiers at once, and a stdin copier stuck in Read is abandoned.
func (r *run) finishIO() {
	closeFiles(r.stdinW)
	if !waitAll(drainWait, r.outDone, r.errDone, r.inDone) {
		closeFiles(r.outR, r.errR)
		<-r.outDone
		<-r.errDone
	}
	closeFiles(r.outR, r.errR)
}

// result assembles the Result from the buffers and the process state.
func (r *run) result(waitErr error) Result {
	res := Result{
		ExitCode:        -1,
		TeeErr:          r.tee.err,
		Stdout:          r.stdout.Bytes(),
		StdoutTruncated: r.stdout.Truncated(),
		Tail:            r.tail.Bytes(),
		OutputBytes:     r.tail.Total(),
	}
	ps := r.cmd.ProcessState
	if ps == nil {
		res.WaitErr = fmt.Errorf("process: wait for %s: %w", r.spec.Argv[0], waitErr)
		return res
	}
	res.ExitCode, res.Signal = ps.ExitCode(), signalName(ps)
	return res
}

// waitAll waits until every channel is closed or d has passed; it reports
// whether all were closed in time.
func waitAll(d time.Duration, chans ...<-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, c := range chans {
		select {
		case <-c:
		case <-t.C:
			return false
		}
	}
	return true
}

// closeFiles closes the non-nil files, ignoring errors (including closing a
// file twice, which *os.File reports harmlessly).
func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// teeWriter forwards writes to w until w first fails, then swallows them, so
// a broken tee never stops stdout from being drained.
type teeWriter struct {
	w   io.Writer
	err error
}

// Write forwards p to the tee if it is still healthy; it never fails.
func (t *teeWriter) Write(p []byte) (int, error) {
	if t.w == nil || t.err != nil {
		return len(p), nil
	}
	n, err := t.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		t.err = fmt.Errorf("process: stdout tee: %w", err)
	}
	return len(p), nil
}
