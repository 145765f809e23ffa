package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/loop-action/loop-action/internal/ledger"
)

// progress shows a run's events on stderr as they happen, each line
// prefixed with the elapsed time, the iteration and the spend so far.
// Colour only dims the prefix, and only on a terminal without NO_COLOR.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	color   bool
	start   time.Time
	now     func() time.Time
	maxIter int
	tokens  int64
	cost    float64
}

func newProgress(w io.Writer, color bool, now func() time.Time) *progress {
	return &progress{w: w, color: color, now: now, start: now()}
}

// Event prints one event.
func (p *progress) Event(e ledger.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.MaxIterations > 0 {
		p.maxIter = e.MaxIterations
	}
	if e.Type == ledger.NodeSucceeded || e.Type == ledger.NodeFailed {
		p.tokens += e.Tokens
		p.cost += e.CostUSD
	}
	elapsed := p.now().Sub(p.start).Round(time.Second)
	where := fmt.Sprintf("it %d/%d", e.Iteration, p.maxIter)
	if e.Wave > 0 {
		where += fmt.Sprintf(" w%d", e.Wave)
	}
	prefix := fmt.Sprintf("[%s %s %dtok $%.2f]", clock(elapsed), where, p.tokens, p.cost)
	if p.color {
		prefix = "\x1b[2m" + prefix + "\x1b[0m"
	}
	fmt.Fprintf(p.w, "%s %s\n", prefix, e.Line())
}

func clock(d time.Duration) string {
	m := int(d / time.Minute)
	s := int((d % time.Minute) / time.Second)
	return fmt.Sprintf("%d:%02d", m, s)
}
