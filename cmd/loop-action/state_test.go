package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// TestStateBranchRefused: --state branch:main would push checkpoint
// commits onto the default branch; it is refused with exit 2 before
// anything runs, as are branch:HEAD and branch:refs/heads/x, and the
// remote keeps its refs.
func TestStateBranchRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	origin := originRepo(t)
	before := gitfake.Git(t, origin, "for-each-ref", "--format=%(refname) %(objectname)")
	tests := []struct{ spec, want string }{
		{"branch:main", `branch "main" refused as a state branch: its tip`},
		{"branch:HEAD", `branch "HEAD" refused as a state branch: HEAD names the checked-out commit, not a branch`},
		{"branch:refs/heads/x", `branch "refs/heads/x" refused as a state branch: give the branch's short name, without refs/`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			clone := shallowClone(t, origin)
			var stdout, stderr bytes.Buffer
			e := env{lookup: func(string) (string, bool) { return "", false }, vars: []string{"PATH=" + os.Getenv("PATH")}, wd: clone}
			code := run(context.Background(), []string{"run", "--state", tt.spec}, e, nil, &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, exitUsage, tt.want, &stdout, &stderr)
			}
			if _, err := os.Stat(filepath.Join(clone, "attempts.log")); err == nil {
				t.Error("an agent ran")
			}
		})
	}
	if after := gitfake.Git(t, origin, "for-each-ref", "--format=%(refname) %(objectname)"); after != before {
		t.Errorf("the remote's refs changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
