package action

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
)

// jobLog is the action's side of the job log's workflow commands around
// a run: a stop-commands fence around everything agents may influence,
// and one group per iteration, opened and closed outside the fence so
// that the runner takes them while nothing an agent prints can open or
// close one. Only the goroutine that runs the job writes to it.
type jobLog struct {
	w     io.Writer
	token string // the open fence's token; "" when none is open
	group bool   // an iteration's group is open
}

// untrusted brackets output that agents influence with stop-commands, so
// nothing they print is taken as a workflow command.
func (l *jobLog) untrusted(f func()) {
	l.open()
	defer l.close()
	f()
}

// trusted writes the action's own workflow commands from inside an
// untrusted bracket: it closes the fence, runs f, and opens a new one
// with a fresh token. Outside a bracket it just runs f.
func (l *jobLog) trusted(f func()) {
	if l.token == "" {
		f()
		return
	}
	l.close()
	defer l.open()
	f()
}

func (j *job) log() *jobLog {
	if j.jlog == nil {
		j.jlog = &jobLog{w: j.env.Stdout}
	}
	return j.jlog
}

func (l *jobLog) open() {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	l.token = hex.EncodeToString(b)
	fmt.Fprintf(l.w, "::stop-commands::%s\n", l.token)
}

func (l *jobLog) close() {
	if l.token != "" {
		fmt.Fprintf(l.w, "::%s::\n", l.token)
		l.token = ""
	}
}

// iteration starts the group of iteration n, ending the one before.
func (l *jobLog) iteration(n int) {
	l.trusted(func() {
		l.endGroup()
		fmt.Fprintf(l.w, "::group::iteration %d\n", n)
		l.group = true
	})
}

// endIterations ends the open iteration's group, if any.
func (l *jobLog) endIterations() {
	l.trusted(l.endGroup)
}

func (l *jobLog) endGroup() {
	if l.group {
		fmt.Fprintln(l.w, "::endgroup::")
		l.group = false
	}
}
