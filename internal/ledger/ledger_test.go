package ledger

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return t }
}

type collect struct{ events []Event }

func (c *collect) Event(e Event) { c.events = append(c.events, e) }

// TestOneCallWritesBoth proves the ledger, the log and the live progress
// are written from the same event by the same call.
func TestOneCallWritesBoth(t *testing.T) {
	t.Parallel()
	live := &collect{}
	r := NewRecorder(41, fixedClock(), live)
	r.Record(Event{Type: NodeFailed, Iteration: 3, Node: "fixer", Reason: "exited 1", Duration: 2 * time.Second})
	r.Record(Event{Type: GoalSatisfied, Iteration: 3, Goal: "tests"})
	led, log, n := r.Take()
	if n != 2 {
		t.Fatalf("Take reported %d events, want 2", n)
	}
	events, err := Decode(bytes.NewReader(led))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	if len(events) != 2 || len(lines) != 2 || len(live.events) != 2 {
		t.Fatalf("%d events, %d log lines, %d live events; want 2 of each", len(events), len(lines), len(live.events))
	}
	for i, e := range events {
		if e.Seq != 42+i {
			t.Errorf("event %d has seq %d, want %d", i, e.Seq, 42+i)
		}
		if !strings.HasSuffix(lines[i], e.Line()) {
			t.Errorf("log line %q does not carry event line %q", lines[i], e.Line())
		}
		if diff := cmp.Diff(live.events[i], e); diff != "" {
			t.Errorf("live event differs from the ledger (-live +ledger):\n%s", diff)
		}
	}
	if led2, log2, n2 := r.Take(); len(led2) != 0 || len(log2) != 0 || n2 != 0 {
		t.Error("Take did not start afresh")
	}
}

func TestRecordConcurrently(t *testing.T) {
	t.Parallel()
	r := NewRecorder(0, time.Now, nil)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Record(Event{Type: NodeSucceeded, Iteration: i})
		}()
	}
	wg.Wait()
	led, _, n := r.Take()
	events, err := Decode(bytes.NewReader(led))
	if err != nil || n != 50 || len(events) != 50 {
		t.Fatalf("%d events decoded (%v), %d counted; want 50", len(events), err, n)
	}
	seen := map[int]bool{}
	for _, e := range events {
		seen[e.Seq] = true
	}
	for i := 1; i <= 50; i++ {
		if !seen[i] {
			t.Fatalf("seq %d missing", i)
		}
	}
}

func TestDecodeNamesTheBadLine(t *testing.T) {
	t.Parallel()
	_, err := Decode(strings.NewReader("{\"seq\":1}\n\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "ledger line 3") {
		t.Fatalf("err = %v, want it to name line 3", err)
	}
}

// TestLines renders one event of every type; the golden file is what the
// run log reads like.
func TestLines(t *testing.T) {
	t.Parallel()
	events := []Event{
		{Type: RunStarted, MaxIterations: 8},
		{Type: RunResumed, Iteration: 3, Status: "cancelled"},
		{Type: BudgetRaised, Reason: "iteration cap 2 → 4"},
		{Type: WorkspaceRestored, Snapshot: "0123456789", Reason: "3 paths changed"},
		{Type: IterationStarted, Iteration: 4, MaxIterations: 8},
		{Type: Perturbed, Iteration: 4, Kind: "reframe", Seed: 42, Stale: 2, Reason: "try something else"},
		{Type: NodeDispatched, Node: "fixer", Role: "builder", Provider: "claude", Tier: "standard", Wave: 1},
		{Type: NodeSucceeded, Node: "fixer", Duration: 12300 * time.Millisecond, Tokens: 1234, CostUSD: 0.0123},
		{Type: NodeFailed, Node: "fixer", Duration: 90 * time.Second, Reason: `agent "claude" exited 1`},
		{Type: NodeSkipped, Node: "writer", Reason: "stage docs is not open (waiting)"},
		{Type: JudgeRetried, Node: "review", Reason: "no parseable verdict"},
		{Type: Published, Node: "coder", Path: "src/a.go", Kind: "modified"},
		{Type: PublishConflict, Node: "tester", Path: "src/a.go", Winner: "coder"},
		{Type: PublishRefused, Node: "coder", Path: ".github/ci.yml", Reason: "protected path"},
		{Type: DeletionKept, Node: "coder", Path: "old.go"},
		{Type: ProtectedReverted, Path: "test.sh", Nodes: []string{"a", "b"}, Reason: "modified"},
		{Type: GateEvaluated, Satisfied: 1, Goals: 2, Passed: 1, Checks: 2, Signature: "a:true:1/1,b:false:0/1"},
		{Type: GoalSatisfied, Goal: "tests"},
		{Type: GoalRevoked, Goal: "lint", Reason: "`golangci-lint run` exited 1"},
		{Type: ReviewRequested, Goal: "ui", Snapshot: "abcdef0123", Reason: "Does it match the mock?"},
		{Type: ReviewDecided, Goal: "ui", Verdict: "approved", By: "alice", Snapshot: "abcdef0123"},
		{Type: StageOpened, Stage: "docs"},
		{Type: StageClosed, Stage: "fix"},
		{Type: StopTriggered, Status: "no-progress", Reason: "3 iterations in a row without progress"},
		{Type: RunFinished, Iteration: 5, Status: "success", Tokens: 9000, Estimated: true, CostUSD: 0.5},
		{Type: ExportWritten, Path: ".loop/export/x-success"},
		{Type: CheckpointSaved, Iteration: 5},
	}
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.Line() + "\n")
	}
	const golden = "testdata/lines.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("lines differ from %s (-want +got):\n%s", golden, diff)
	}
}
