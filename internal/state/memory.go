package state

import (
	"fmt"
	"strings"
	"time"
)

// Memory is the entry one run generation leaves for later runs of its
// loop (the [memory] table): how it ended and what its measurements
// showed, built by the runner from what it recorded itself, never from
// what an agent said. A store keeps an entry beside its run's checkpoint,
// written by the save that commits the generation's terminal status
// ([Commit].Memory), and at most [MaxMemoryPerRun] entries per run.
type Memory struct {
	RunID string `json:"run_id"`
	// Generation names the entry among its run's: the generation's start
	// (the checkpoint's StartedAt) as GenerationName writes it.
	Generation string       `json:"generation"`
	Loop       string       `json:"loop"`
	ConfigHash string       `json:"config_hash"`
	Commit     string       `json:"commit,omitempty"`
	At         time.Time    `json:"at"` // when the generation ended
	Outcome    Status       `json:"outcome"`
	Detail     string       `json:"detail,omitempty"` // the stop's detail, masked
	Iterations int          `json:"iterations"`
	Spend      Spend        `json:"spend"`
	Goals      []GoalMemory `json:"goals"`
	Nodes      []NodeMemory `json:"nodes,omitempty"`
}

// GoalMemory is what a generation's measurements showed of one goal.
type GoalMemory struct {
	Goal      string `json:"goal"`
	Satisfied bool   `json:"satisfied"` // at the end
	// SatisfiedAt is the iteration whose measurement first satisfied the
	// goal (0: the measurement before the first iteration), -1 never.
	SatisfiedAt int      `json:"satisfied_at"`
	Flips       []Flip   `json:"flips,omitempty"`
	Failing     []string `json:"failing,omitempty"` // the evidence of each check not passing at the end, masked and cut
}

// NodeMemory is a node as it was configured in the generation.
type NodeMemory struct {
	Name        string `json:"name"`
	Role        string `json:"role"`
	Instruction string `json:"instruction,omitempty"` // cut
	Revisions   int    `json:"revisions,omitempty"`
}

// Flip is a check's status changing from one measurement to the next.
type Flip struct {
	Iteration int    `json:"iteration"` // the iteration whose measurement saw the new status
	Goal      string `json:"goal"`
	Check     int    `json:"check"` // the check's index in its goal
	Type      string `json:"type"`
	From      string `json:"from,omitempty"` // "" for the first measurement of a check
	To        string `json:"to"`
	// Paths are the files whose content changed between the two
	// measurements (at most MaxFlipPaths; MorePaths counts the rest). Nil
	// when the runner could not tell (the first measurement after a resume).
	Paths     []string `json:"paths,omitempty"`
	MorePaths int      `json:"more_paths,omitempty"`
}

// Trace is what a run generation's checkpoint keeps for its memory entry
// while it runs: every check flip (the latest MaxTraceFlips) and the
// iteration each goal was first satisfied in.
type Trace struct {
	Flips       []Flip         `json:"flips,omitempty"`
	SatisfiedAt map[string]int `json:"satisfied_at,omitempty"`
}

// Bounds of memory entries and of the trace they are built from.
const (
	MaxMemoryPerRun = 50        // entries a run keeps; a save drops the oldest beyond
	MaxMemoryBytes  = 256 << 10 // the largest entry a save accepts, as JSON
	MaxTraceFlips   = 200
	MaxFlipPaths    = 20
)

// GenerationName names a generation by its start: sortable, and safe as a
// file name on any system.
func GenerationName(started time.Time) string {
	return started.UTC().Format("20060102T150405.000000000Z")
}

// ID names an entry for people and for forget: RUN-ID@GENERATION.
func (m Memory) ID() string { return m.RunID + "@" + m.Generation }

// ParseMemoryID splits an entry's ID into its run and its generation.
func ParseMemoryID(id string) (runID, generation string, err error) {
	i := strings.LastIndexByte(id, '@')
	if i < 0 {
		return "", "", fmt.Errorf("memory entry %q: want RUN-ID@GENERATION", id)
	}
	runID, generation = id[:i], id[i+1:]
	if err := ValidRunID(runID); err != nil {
		return "", "", fmt.Errorf("memory entry %q: %w", id, err)
	}
	if _, err := time.Parse("20060102T150405.000000000Z", generation); err != nil {
		return "", "", fmt.Errorf("memory entry %q: %q is not a generation", id, generation)
	}
	return runID, generation, nil
}
