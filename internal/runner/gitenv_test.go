package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGitEnv(t *testing.T) {
	t.Parallel()
	ours := []string{
		"GIT_CONFIG_KEY_%=core.fsmonitor", "GIT_CONFIG_VALUE_%=false",
		"GIT_CONFIG_KEY_%=core.hooksPath", "GIT_CONFIG_VALUE_%=" + os.DevNull,
	}
	// numbered fills in the indexes of ours from n on.
	numbered := func(n int) []string {
		out := make([]string, len(ours))
		for i, kv := range ours {
			out[i] = strings.Replace(kv, "%", string(rune('0'+n+i/2)), 1)
		}
		return out
	}
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"none", []string{"PATH=/bin"},
			append(append([]string{"PATH=/bin"}, numbered(0)...), "GIT_CONFIG_COUNT=2")},
		{"kept and renumbered", []string{
			"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_COUNT=3", "A=1", "GIT_CONFIG_VALUE_0=me",
			"GIT_CONFIG_KEY_2=safe.directory", "GIT_CONFIG_VALUE_2=*", "GIT_CONFIG_KEY_1=only.key",
		}, append(append([]string{"A=1",
			"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
			"GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=*"}, numbered(2)...), "GIT_CONFIG_COUNT=4")},
		{"beyond the count", []string{"GIT_CONFIG_COUNT=0", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=evil"},
			append(numbered(0), "GIT_CONFIG_COUNT=2")},
		{"bogus count", []string{"GIT_CONFIG_COUNT=999999999999", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"},
			append(append([]string{"GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"}, numbered(1)...), "GIT_CONFIG_COUNT=3")},
		{"not a number", []string{"GIT_CONFIG_COUNT=x"}, append(numbered(0), "GIT_CONFIG_COUNT=2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, GitEnv(tt.env)); diff != "" {
				t.Errorf("GitEnv (-want +got):\n%s", diff)
			}
		})
	}
}

// gitRepo makes dir a git repository with one commit, an identity, and
// whatever extra configuration is given (key, value, key, value...).
func gitRepo(t *testing.T, dir string, config ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("config", "user.name", "loop")
	run("config", "user.email", "loop@example.com")
	run("commit", "-q", "--allow-empty", "-m", "init")
	for i := 0; i+1 < len(config); i += 2 {
		run("config", config[i], config[i+1])
	}
}

const gitChecked = `name = "gitchecked"
[stop]
max_iterations = 1
[providers.a]
command = ["a"]
[[node]]
name = "idle"
provider = "a"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "touch x && git add -A && git status --short >/dev/null && git commit -q -m measured"
`

// TestChecksRunNoGitFsmonitorOrHook: the guards put back what agents
// plant in .git during a run, but not what was there before it started
// (a run killed mid-wave resumes with whatever its agents left) nor what
// an agent writes to the user's own git configuration outside the root.
// Checks' git must run no fsmonitor command and no hook whatever the
// configuration says.
func TestChecksRunNoGitFsmonitorOrHook(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gitChecked, map[string]Provider{"a": idle(1)})
	ran := filepath.Join(t.TempDir(), "ran")
	cheat := filepath.Join(h.root, ".git", "cheat.sh")
	gitRepo(t, h.root, "core.fsmonitor", cheat)
	if err := os.WriteFile(cheat, []byte("#!/bin/sh\necho \"$0 $*\" >>"+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.root, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nexec "+cheat+" pre-commit\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.opts.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+h.root)
	out := h.run(context.Background())
	if out.Verdicts[0].Checks[0].Status != "pass" {
		t.Fatalf("the check failed: %s", out.Verdicts[0].Checks[0].Evidence)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Errorf("a check's git ran the repository's commands:\n%s", b)
	}
}
