package runner

import "time"

// phaseClock, when set in Options.phases, is told how long each phase of
// an iteration took (dispatch, guards, sweeps, evidence, gate, summary,
// history, checkpoint...): the spawn-floor benchmark's breakdown. A run
// without it times nothing.
type phaseClock func(phase string, took time.Duration)

// span starts timing a phase; call what it returns when the phase ends.
func (r *run) span(phase string) func() {
	if r.opts.phases == nil {
		return func() {}
	}
	start := time.Now()
	return func() { r.opts.phases(phase, time.Since(start)) }
}
