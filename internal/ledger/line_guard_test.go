package ledger

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGuardLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    Event
		want string
	}{
		{Event{Type: ProtectedReverted, Path: "test.sh", Nodes: []string{"a", "b"}, Reason: "modified"},
			"protected path test.sh reverted (modified; changed by a or b)"},
		{Event{Type: ProtectedReverted, Path: "test.sh", Reason: "modified while the evidence was collected"},
			"protected path test.sh reverted (modified while the evidence was collected)"},
		{Event{Type: GitReverted, Path: ".git/hooks/pre-commit", Nodes: []string{"fixer"}, Reason: "created"},
			"git path .git/hooks/pre-commit reverted (created; changed by fixer)"},
		{Event{Type: RootReverted, Path: "test.sh", Nodes: []string{"fixer"}, Reason: "modified"},
			"loop root path test.sh reverted: modified outside the worktrees of isolated nodes; changed by fixer"},
		{Event{Type: UncarriedRemoved, Path: "build/helper.sh", Reason: "created"},
			"ignored path build/helper.sh removed before measuring: created since the session started; no commit carries it"},
		{Event{Type: MeasurementVoid, Iteration: 3, Reason: "test.sh changed while the evidence was collected (put back)"},
			"measurement of iteration 3 void: test.sh changed while the evidence was collected (put back)"},
	}
	for _, tt := range tests {
		t.Run(string(tt.e.Type), func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.e.Line()); diff != "" {
				t.Errorf("Line (-want +got):\n%s", diff)
			}
		})
	}
}
