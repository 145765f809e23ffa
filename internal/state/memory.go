package state

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
	return started.UTC().Format(generationLayout)
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
	if err := validGeneration(generation); err != nil {
		return "", "", fmt.Errorf("memory entry %q: %w", id, err)
	}
	return runID, generation, nil
}

// memoryDir is the directory of a run's memory entries, one file per
// generation: memory/<generation>.json.
const memoryDir = "memory"

const generationLayout = "20060102T150405.000000000Z"

func memoryName(generation string) string { return generation + ".json" }

// validGeneration reports whether g is a generation name, as
// GenerationName writes it.
func validGeneration(g string) error {
	t, err := time.Parse(generationLayout, g)
	if err != nil || GenerationName(t) != g {
		return fmt.Errorf("%q is not a generation (want the form %s)", g, GenerationName(time.Unix(0, 0)))
	}
	return nil
}

// encodeMemory checks what a save of cp does to its run's memory, before
// it writes anything, and returns the entry to store (nil for none).
func encodeMemory(cp *Checkpoint, c Commit) ([]byte, error) {
	for _, g := range c.Forget {
		if err := validGeneration(g); err != nil {
			return nil, fmt.Errorf("forget memory entry: %w", err)
		}
	}
	m := c.Memory
	if m == nil {
		return nil, nil
	}
	if m.RunID != cp.RunID {
		return nil, fmt.Errorf("memory entry of run %q in a save of run %q", m.RunID, cp.RunID)
	}
	if err := validGeneration(m.Generation); err != nil {
		return nil, fmt.Errorf("memory entry: %w", err)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("memory entry: %w", err)
	}
	if len(data) >= MaxMemoryBytes {
		return nil, fmt.Errorf("memory entry %s is %d bytes; the limit is %d", m.ID(), len(data), MaxMemoryBytes)
	}
	return append(data, '\n'), nil
}

// memoryNames are the names a run's memory directory holds after a save
// that puts put (if not "") and forgets forget, in order: the oldest
// beyond MaxMemoryPerRun dropped. It returns the names kept and dropped.
func memoryNames(have []string, put string, forget []string) (keep, drop []string) {
	for _, g := range forget {
		drop = append(drop, memoryName(g))
	}
	for _, n := range have {
		if !slices.Contains(drop, n) && n != put {
			keep = append(keep, n)
		}
	}
	if put != "" {
		keep = append(keep, put)
	}
	slices.Sort(keep)
	if n := len(keep) - MaxMemoryPerRun; n > 0 {
		drop, keep = append(drop, keep[:n]...), keep[n:]
	}
	return keep, drop
}

// storedMemory is one file of a run's memory directory.
type storedMemory struct {
	name string
	data []byte
}

// Memory lists the memory entries of every run, the latest first (ties by
// ID). An entry of the generation the run's committed checkpoint is of
// shows only once that checkpoint has ended for good at the entry's
// iteration, so what an interrupted save left is invisible.
func (r reads) Memory(ctx context.Context) ([]Memory, error) {
	defer r.b.hold()()
	ids, err := r.b.runIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list memory %s: %w", r.b.place(), err)
	}
	var out []Memory
	for _, id := range ids {
		files, err := r.b.memories(id)
		if err != nil {
			return nil, fmt.Errorf("list memory %s: run %q: %w", r.b.place(), id, err)
		}
		if len(files) == 0 {
			continue
		}
		cp, err := r.b.load(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("list memory %s: run %q: %w", r.b.place(), id, err)
		}
		for _, f := range files {
			var m Memory
			if err := json.Unmarshal(f.data, &m); err != nil || m.RunID != id || memoryName(m.Generation) != f.name {
				return nil, fmt.Errorf("list memory %s: run %q: memory entry %s is corrupt", r.b.place(), id, f.name)
			}
			if visible(cp, m) {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b Memory) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return strings.Compare(a.ID(), b.ID())
	})
	return out, nil
}

func visible(cp *Checkpoint, m Memory) bool {
	if GenerationName(cp.StartedAt) != m.Generation {
		return true
	}
	return cp.Status.Terminal() && !cp.Status.Resumable() && cp.Iteration == m.Iterations
}
