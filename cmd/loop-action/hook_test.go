package main

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestHookScripts drives `loop-action hook` with the scripts in
// testdata/script/hook: real git, a bare repository as the remote, the
// installed hook running the real binary (on $PATH) when git pushes or
// commits. Every script has a git identity and a home of its own.
func TestHookScripts(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the hooks and checks are POSIX sh")
	}
	p := scriptParams(t, "../../testdata/script/hook", false)
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		home := filepath.Join(e.WorkDir, ".home")
		for _, kv := range [][2]string{
			{"HOME", home}, {"XDG_CONFIG_HOME", filepath.Join(home, ".config")}, {"GIT_CONFIG_NOSYSTEM", "1"},
			{"GIT_AUTHOR_NAME", "dev"}, {"GIT_AUTHOR_EMAIL", "dev@example.com"},
			{"GIT_COMMITTER_NAME", "dev"}, {"GIT_COMMITTER_EMAIL", "dev@example.com"},
		} {
			e.Setenv(kv[0], kv[1])
		}
		return nil
	}
	testscript.Run(t, p)
}
