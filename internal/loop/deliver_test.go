package loop

import "testing"

func TestCommitMessage(t *testing.T) {
	t.Parallel()
	values := map[string]string{"loop": "demo", "run_id": "demo/pr-7", "iteration": "2", "snapshot": "abc1234"}
	tests := []struct{ message, want string }{
		{DefaultDeliverMessage, "loop demo: certified at iteration 2"},
		{"{run_id} {snapshot} {snapshot}", "demo/pr-7 abc1234 abc1234"},
		{"braces {} and { loop } stay", "braces {} and { loop } stay"},
		{"{unknown} stays", "{unknown} stays"},
	}
	for _, tt := range tests {
		t.Run(tt.message, func(t *testing.T) {
			t.Parallel()
			if got := (Deliver{Message: tt.message}).CommitMessage(values); got != tt.want {
				t.Errorf("CommitMessage(%q) = %q, want %q", tt.message, got, tt.want)
			}
		})
	}
}
