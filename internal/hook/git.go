package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/runner"
)

// Repo is the repository a hook runs in. Open finds it the way git told
// the hook to (GIT_DIR and GIT_WORK_TREE count); every later git names
// it explicitly and runs without the repository variables.
type Repo struct {
	Top    string   // the working tree's top level: the loop root
	GitDir string   // the working tree's git directory (absolute)
	common string   // the git directory worktrees share: config, hooks
	hooks  string   // where git looks for hooks
	format string   // the object format: sha1 or sha256
	env    []string // gitEnv: hooks and fsmonitor off
}

// Open finds the repository of dir with the environment git gave the hook,
// where its hooks are (core.hooksPath, relative or absolute, or the hooks
// of the common git directory) and its object format: one rev-parse,
// which runs no hook.
func Open(ctx context.Context, dir string, env []string) (*Repo, error) {
	out, err := git(ctx, dir, env, nil, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir", "--git-path", "hooks", "--show-object-format")
	if err != nil {
		return nil, fmt.Errorf("find the repository of %q: %w", dir, err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 5 {
		return nil, fmt.Errorf("find the repository of %q: not in a working tree", dir)
	}
	return &Repo{Top: filepath.Clean(lines[0]), GitDir: filepath.Clean(lines[1]), common: filepath.Clean(lines[2]), hooks: filepath.Clean(lines[3]), format: lines[4], env: gitEnv(env)}, nil
}

// git runs git on the repository.
func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	return git(ctx, r.Top, r.env, nil, append([]string{"--git-dir=" + r.GitDir, "--work-tree=" + r.Top}, args...)...)
}

// gitPath is `git rev-parse --git-path name`, absolute: where git keeps
// name for this working tree.
func (r *Repo) gitPath(ctx context.Context, name string) (string, error) {
	out, err := r.git(ctx, "rev-parse", "--path-format=absolute", "--git-path", name)
	return strings.TrimSpace(out), err
}

// loopDir is the hook's own directory, under the loop root's .loop.
func (r *Repo) loopDir(parts ...string) string {
	return filepath.Join(append([]string{r.Top, ".loop", "hook"}, parts...)...)
}

// ownDir makes the hook's directory under .loop, or one below it, and
// returns it. The first time, it writes a .gitignore there that keeps the
// user's git from seeing it (git add -A would take the checkout for an
// embedded repository).
func (r *Repo) ownDir(parts ...string) (string, error) {
	dir := r.loopDir(parts...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("make %q: %w", dir, err)
	}
	ignore := r.loopDir(".gitignore")
	if _, err := os.Lstat(ignore); err == nil {
		return dir, nil
	}
	if err := os.WriteFile(ignore, []byte("# loop-action hook: the isolated checkout and the verdict cache\n*\n"), 0o644); err != nil {
		return "", fmt.Errorf("make %q: %w", dir, err)
	}
	return dir, nil
}

// git runs git in dir with env and returns its stdout; a failure carries
// the end of its stderr.
func git(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return stdout.String(), fmt.Errorf("git %s: %s", args[firstVerb(args)], msg)
		}
		return stdout.String(), fmt.Errorf("git %s: %w", args[firstVerb(args)], err)
	}
	return stdout.String(), nil
}

// firstVerb is the index of git's subcommand in args (after its options).
func firstVerb(args []string) int {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			return i
		}
	}
	return 0
}

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
