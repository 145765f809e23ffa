package guard

import "testing"

// TestGitGuarded checks which paths of a git directory the guards keep
// and which directories their scans enter: configuration, hooks and info
// in any git directory (a submodule's, a linked worktree's), never the
// object store, refs or logs.
func TestGitGuarded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rel             string
		guarded, enters bool
	}{
		{"config", true, true},
		{"config.worktree", true, true},
		{"commondir", true, true},
		{"hooks/pre-commit", true, true},
		{"info/attributes", true, true},
		{"modules/sub/config", true, true},
		{"worktrees/wt/info/sparse-checkout", true, true},
		{"HEAD", false, true},
		{"description", false, true},
		{"objects", false, false},
		{"modules/sub/objects", false, false},
		{"refs", false, false},
		{"logs", false, false},
		{"lfs", false, false},
		{"rr-cache", false, false},
	} {
		if got := GitGuarded(tc.rel); got != tc.guarded {
			t.Errorf("GitGuarded(%q) = %v, want %v", tc.rel, got, tc.guarded)
		}
		if got := GitDescend(tc.rel); got != tc.enters {
			t.Errorf("GitDescend(%q) = %v, want %v", tc.rel, got, tc.enters)
		}
	}
}
