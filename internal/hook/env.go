package hook

import (
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/runner"
)

// repoVars are the variables that tie git to one repository, as `git
// rev-parse --local-env-vars` lists them, plus GIT_QUARANTINE_PATH and
// GIT_NAMESPACE. Git exports some of them to hooks (GIT_DIR in a linked
// worktree, GIT_INDEX_FILE in pre-commit): inherited by a check in the
// isolated checkout, they would point its git at the user's repository
// and index.
var repoVars = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
	"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR", "GIT_QUARANTINE_PATH",
	"GIT_NAMESPACE",
}

// CleanEnv is env without the repository variables (repoVars) and the
// numbered GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n that go with
// GIT_CONFIG_COUNT: the environment of everything the hook starts. The
// git the hook runs itself gets runner.GitEnv on top (gitEnv).
func CleanEnv(env []string) []string {
	return environ.Env(env).WithoutFunc(func(k string) bool {
		return slices.Contains(repoVars, k) || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_")
	})
}

// gitEnv is the environment of the git the hook runs: CleanEnv with hooks
// and fsmonitor off (runner.GitEnv).
func gitEnv(env []string) []string { return runner.GitEnv(CleanEnv(env)) }
