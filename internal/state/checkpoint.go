// Package state owns where a run's state lives between processes: the
// checkpoint (every counter a resume needs), the ledger chunks, the
// deterministic summaries, the review decisions and the run log.
//
// It stores and loads; it never decides anything about a run. Every save is
// atomic: a process killed at any instant leaves either the previous
// checkpoint or the new one, never a torn mix.
//
// Two mechanisms stay hand-written where go-git might seem to do them: the
// branch: store's push sends only the objects a save made, through
// package gitremote's compare-and-swap exchange (go-git's Push walks all
// that the remote's refs reach), and its local cache is collected here
// (go-git's Prune and RepackObjects walk every parent, which a cache
// fetched at depth 1 lacks).
package state

import (
	"errors"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
)

// Version is the checkpoint format version.
const Version = 1

// Status is where a run stands: running, or the reason it stopped.
type Status string

// Statuses. Every status but Running is a stop reason.
const (
	Running        Status = "running"
	Success        Status = "success"
	AwaitingReview Status = "awaiting-review"
	Escalated      Status = "escalated"
	NoProgress     Status = "no-progress"
	IterationCap   Status = "iteration-cap"
	WallClock      Status = "wall-clock"
	TokenBudget    Status = "token-budget"
	CostBudget     Status = "cost-budget"
	Cancelled      Status = "cancelled"
)

// Terminal reports whether the run has stopped. A run awaiting review or
// cancelled has stopped too, but resumes; see Resumable.
func (s Status) Terminal() bool { return s != Running && s != "" }

// BudgetStop reports whether a budget stopped the run, so that raising the
// budget lets it continue.
func (s Status) BudgetStop() bool {
	switch s {
	case IterationCap, WallClock, TokenBudget, CostBudget:
		return true
	}
	return false
}

// Resumable reports whether a run in this status continues when resumed
// without changing anything: it was interrupted or paused.
func (s Status) Resumable() bool { return s == Running || s == Cancelled || s == AwaitingReview }

// Spend is what a run has used, summed across every resume.
type Spend struct {
	Tokens    int64         `json:"tokens"`
	Estimated bool          `json:"tokens_estimated,omitempty"` // some tokens were estimated, not reported
	CostUSD   float64       `json:"cost_usd"`
	WallClock time.Duration `json:"wall_clock_ns"`
}

// Checkpoint is everything needed to resume a run.
type Checkpoint struct {
	Version    int    `json:"version"`
	RunID      string `json:"run_id"`
	Loop       string `json:"loop"`        // the config's name
	ConfigFile string `json:"config_file"` // as the user named it
	ConfigHash string `json:"config_hash"` // sha256 of the config's text
	Commit     string `json:"commit,omitempty"`

	Status     Status `json:"status"`
	StopDetail string `json:"stop_detail,omitempty"` // why it stopped, for people

	Iteration     int               `json:"iteration"`      // iterations completed
	MaxIterations int               `json:"max_iterations"` // the cap in force
	Stale         int               `json:"stale"`          // iterations in a row without progress
	Signature     string            `json:"signature"`      // gate.Signature of the last verdicts
	Revisions     map[string]int    `json:"revisions,omitempty"`
	NodeFailures  int               `json:"node_failures"`
	Tiers         map[string]string `json:"tiers,omitempty"`  // each builder's current tier
	Stages        map[string]string `json:"stages,omitempty"` // each stage: "waiting", "open" or "closed"
	Verdicts      []gate.Verdict    `json:"verdicts,omitempty"`
	Snapshot      string            `json:"snapshot,omitempty"` // workspace snapshot of the last gate
	Spend         Spend             `json:"spend"`
	Summaries     []string          `json:"summaries,omitempty"` // the latest summaries, oldest first
	Decisions     []gate.Decision   `json:"decisions,omitempty"`
	// Trace is what the generation's memory entry and proposal are built
	// from: the checks' flips, the goals' first satisfaction.
	Trace *Trace `json:"trace,omitempty"`

	// LastCommentID is the newest PR comment the action has processed, so a
	// later job can pick up commands a concurrency group dropped.
	LastCommentID int64 `json:"last_comment_id,omitempty"`

	// Delivery is where the action delivered this generation's work, if it
	// did: a generation delivers its certified work at most once.
	Delivery *Delivery `json:"delivery,omitempty"`

	// Kept by the store: how much of the ledger and log the checkpoint covers.
	LedgerChunks int   `json:"ledger_chunks"`
	LedgerEvents int   `json:"ledger_events"`
	LogBytes     int64 `json:"log_bytes"`

	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Delivery records one delivery of a run's work by the action.
type Delivery struct {
	Kind        string    `json:"kind"`                   // "certified", or "partial" for a run stopped without success
	Mode        string    `json:"mode"`                   // how: "push", "pull-request" or "comment"
	Outcome     string    `json:"outcome"`                // "pushing" while in flight, then "pushed", "moved", "refused", "posted" or "failed"
	Ref         string    `json:"ref,omitempty"`          // the branch pushed to
	SHA         string    `json:"sha,omitempty"`          // the commit delivered
	Base        string    `json:"base,omitempty"`         // its parent: the commit the run started from
	Snapshot    string    `json:"snapshot"`               // the workspace snapshot it carries
	PullRequest int       `json:"pull_request,omitempty"` // the pull request opened or updated for it
	At          time.Time `json:"at"`
}

// Commit is what one save adds besides the checkpoint itself.
type Commit struct {
	Ledger  []byte // this save's ledger events, JSON lines; becomes the next ledger chunk
	Events  int    // how many events Ledger holds
	Log     []byte // this save's run-log lines, appended to the run log
	Summary string // the summary of iteration cp.Iteration, if this save ends one
	// Memory, when set, is the generation's memory entry, stored with the
	// checkpoint (its RunID is cp.RunID); an entry of the same generation
	// is replaced.
	Memory *Memory
	// Forget names generations of cp.RunID whose memory entries the save
	// drops.
	Forget []string
	// Recording, when set, is the iteration's recording (recording.go),
	// stored with the checkpoint; Objects stores its snapshot's objects.
	Recording *Recording
	Objects   ObjectWriter
	// KeepWorkspace keeps the workspace the run's last checkpoint stored
	// (branch: store): a save made outside a run — a review decision, a
	// stop — must not snapshot whatever checkout it happens to run in.
	KeepWorkspace bool
	// Interrupted says the run was stopped in the middle of an iteration
	// (a signal, its wall-clock deadline): the save reads nothing of the
	// loop root, whose walk may be what ran out of time. It keeps the
	// workspace the last checkpoint stored when KeepWorkspace says so, and
	// otherwise stores none (the run was stopped before its first
	// checkpoint: no agent has run, and a resume restores nothing).
	Interrupted bool
}

// ErrNotFound is returned when a run has no checkpoint.
var ErrNotFound = errors.New("no checkpoint for this run")

// ErrLocked is returned when another process holds a run.
var ErrLocked = errors.New("run is in use by another process")
