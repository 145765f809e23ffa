// Package ledger owns the record of a run: typed events, appended as JSON
// lines, and the human-readable run log rendered from the very same events
// by the same call, so the two can never disagree.
//
// It records; it never decides. It reads no clock of its own (the caller
// passes one) and writes only to the buffers and writers it is given.
package ledger

import (
	"time"
)

// Type names an event.
type Type string

// Event types.
const (
	RunStarted        Type = "run_started"
	RunResumed        Type = "run_resumed"
	BudgetRaised      Type = "budget_raised"
	WorkspaceRestored Type = "workspace_restored"
	IterationStarted  Type = "iteration_started"
	Perturbed         Type = "perturbed"
	NodeDispatched    Type = "node_dispatched"
	NodeSucceeded     Type = "node_succeeded"
	NodeFailed        Type = "node_failed"
	NodeSkipped       Type = "node_skipped"
	JudgeRetried      Type = "judge_retried"
	ProtectedReverted Type = "protected_path_reverted"
	GitReverted       Type = "git_path_reverted"      // a guarded path of .git (config, hooks, info) put back
	RootReverted      Type = "root_path_reverted"     // the loop root changed during a wave of isolated nodes
	MeasurementVoid   Type = "measurement_voided"     // guarded paths changed while the evidence was collected
	UncarriedRemoved  Type = "uncarried_path_removed" // an ignored (uncarried) path that changed since the session started, removed before measuring
	Published         Type = "published"
	PublishConflict   Type = "publish_conflict"
	PublishRefused    Type = "publish_refused"
	DeletionKept      Type = "deletion_not_propagated"
	GateEvaluated     Type = "gate_evaluated"
	GoalSatisfied     Type = "goal_satisfied"
	GoalRevoked       Type = "goal_revoked"
	ReviewRequested   Type = "review_requested"
	ReviewDecided     Type = "review_decided"
	ReviewDropped     Type = "review_dropped" // a stored decision that did not stand up to verification
	StageOpened       Type = "stage_opened"
	StageClosed       Type = "stage_closed"
	StopTriggered     Type = "stop_triggered"
	RunFinished       Type = "run_finished"
	ExportWritten     Type = "export_written"
	CheckpointSaved   Type = "checkpoint_saved"
)

// Event is one thing that happened in a run. Which fields are set depends
// on Type; the rest are empty.
type Event struct {
	Seq       int       `json:"seq"`
	Time      time.Time `json:"time"`
	Type      Type      `json:"type"`
	Iteration int       `json:"iteration"`
	Wave      int       `json:"wave,omitempty"`

	Node     string   `json:"node,omitempty"`
	Role     string   `json:"role,omitempty"`
	Provider string   `json:"provider,omitempty"`
	Tier     string   `json:"tier,omitempty"`
	Goal     string   `json:"goal,omitempty"`
	Stage    string   `json:"stage,omitempty"`
	Path     string   `json:"path,omitempty"`
	Nodes    []string `json:"nodes,omitempty"`  // nodes that may have made a change
	Winner   string   `json:"winner,omitempty"` // a publish conflict's first writer

	Status   string `json:"status,omitempty"`  // a run's status or stop reason
	Reason   string `json:"reason,omitempty"`  // why: a skip, a failure, a stop
	Kind     string `json:"kind,omitempty"`    // a perturbation's kind
	Seed     uint64 `json:"seed,omitempty"`    // a perturbation's seed
	By       string `json:"by,omitempty"`      // a reviewer
	Verdict  string `json:"verdict,omitempty"` // approved | rejected
	Snapshot string `json:"snapshot,omitempty"`

	Satisfied int    `json:"satisfied,omitempty"` // goals satisfied after a gate
	Goals     int    `json:"goals,omitempty"`     // goals in all
	Passed    int    `json:"passed,omitempty"`    // checks passing after a gate
	Checks    int    `json:"checks,omitempty"`    // checks in all
	Signature string `json:"signature,omitempty"`
	Stale     int    `json:"stale,omitempty"`

	MaxIterations int           `json:"max_iterations,omitempty"`
	Tokens        int64         `json:"tokens,omitempty"`
	Estimated     bool          `json:"estimated,omitempty"`
	CostUSD       float64       `json:"cost_usd,omitempty"`
	Duration      time.Duration `json:"duration_ns,omitempty"`
}
