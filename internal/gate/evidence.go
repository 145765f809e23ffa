// Package gate owns the verdicts: it turns evidence the runner measured into
// a ruling on every goal and on overall success, with one exact, useful
// evidence line per check.
//
// It is pure: no I/O, no clock, no environment, no randomness. The same
// config and evidence always give the same verdicts. It never sees what a
// builder said; the only model output it reads is a judge's answer, parsed
// by ParseVerdict. Collecting evidence is the job of package gate/evidence.
package gate

import "time"

// CheckID names one check: the goal's name and the check's index in it.
type CheckID struct {
	Goal  string `json:"goal"`
	Index int    `json:"index"`
}

// Evidence is everything measured for one evaluation.
type Evidence struct {
	Commands  map[CheckID]CommandResult `json:"commands,omitempty"`
	Files     map[CheckID]FileResult    `json:"files,omitempty"` // file_exists and regex checks
	Metrics   *MetricsResult            `json:"metrics,omitempty"`
	Judges    map[string]JudgeResult    `json:"judges,omitempty"` // by judge node name
	Decisions []Decision                `json:"decisions,omitempty"`
	Snapshot  string                    `json:"snapshot,omitempty"` // workspace snapshot id; "" when it could not be taken
	// Void says why the measurement certifies nothing although the checks
	// ran: the snapshot could not be taken, or the workspace holds files no
	// checkout of it reproduces (the checks measured other bytes than it
	// holds). The runner fails every check with it; "" when it can count.
	Void string `json:"void,omitempty"`
}

// CommandResult is what running one command showed.
type CommandResult struct {
	Command     string        `json:"command"`             // as shown to users
	ExitCode    int           `json:"exit_code"`           // -1 when it did not exit normally
	Signal      string        `json:"signal,omitempty"`    // set when a signal ended it
	TimedOut    bool          `json:"timed_out,omitempty"` // its own timeout expired
	Stopped     string        `json:"stopped,omitempty"`   // why the run stopped it early (cancelled, out of budget)
	StartErr    string        `json:"start_error,omitempty"`
	Duration    time.Duration `json:"duration"`
	Tail        string        `json:"tail,omitempty"` // the end of its combined output
	Stdout      string        `json:"-"`              // the end of its stdout (metrics read it)
	StdoutCut   bool          `json:"-"`              // Stdout is only the end of a longer stdout
	OutputBytes int64         `json:"output_bytes"`
}

// FileResult is what looking at one path inside the loop root showed.
type FileResult struct {
	Path      string `json:"path"`
	Exists    bool   `json:"exists"`
	Dir       bool   `json:"dir,omitempty"`
	Size      int64  `json:"size,omitempty"`    // bytes of a file
	Entries   int    `json:"entries,omitempty"` // entries of a directory
	Escapes   string `json:"escapes,omitempty"` // where a path that leaves the root leads
	Err       string `json:"error,omitempty"`   // why it could not be read
	Content   []byte `json:"-"`                 // a file's content, for regex checks
	TooLarge  bool   `json:"too_large,omitempty"`
	ReadLimit int64  `json:"-"` // the size above which content is not read
}

// MetricsResult is the metrics command's run; its stdout holds the JSON.
type MetricsResult struct {
	Command CommandResult `json:"command"`
}

// JudgeResult is what a judge node answered this iteration.
type JudgeResult struct {
	Node     string   `json:"node"`
	Provider string   `json:"provider"`          // the provider it ran on
	Answers  []string `json:"answers,omitempty"` // each attempt's answer text, in order
	Err      string   `json:"error,omitempty"`   // why it could not run
}

// Decision is a human's ruling on a goal's manual checks, bound to the
// workspace snapshot they reviewed.
type Decision struct {
	Goal     string `json:"goal"`
	Approved bool   `json:"approved"`
	By       string `json:"by"`
	Reason   string `json:"reason,omitempty"`
	Snapshot string `json:"snapshot"`
	// Comment is the id of the pull request comment the decision came
	// from, so that whoever reads it back from a store can check it again;
	// 0 when it was made another way (loop-action review).
	Comment int64 `json:"comment,omitempty"`
}
