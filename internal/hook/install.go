package hook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Hooks are the git hooks loop-action installs.
var Hooks = []string{"pre-push", "pre-commit"}

// Modes are what an installed hook does when the gate fails: refuse
// (gate), or also run a bounded loop that leaves a fix branch (loop).
var Modes = []string{"gate", "loop"}

// marker starts the line by which uninstall and status recognise a shim
// install wrote: "# loop-action-hook: pre-push mode=gate".
const marker = "# loop-action-hook: "

// Beside a hook that was there before install: the hook kept and run
// first (--chain), or kept and not run (--force).
const (
	chainedSuffix = ".loop-action-chained"
	backupSuffix  = ".loop-action-backup"
)

// InstallOptions say what to install.
type InstallOptions struct {
	Hook   string // pre-push or pre-commit
	Mode   string // gate or loop
	Chain  bool   // keep a hook that is there and run it first
	Force  bool   // replace a hook that is there, keeping a backup
	Binary string // the absolute path of loop-action, for when PATH has none
	Config string // the --config the hook passes, if any
}

// ExistsError is install's refusal to replace a hook it did not write.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s is a hook loop-action did not install: left alone; use --chain to run it before loop-action's, or --force to replace it (it is kept as %s)",
		e.Path, filepath.Base(e.Path)+backupSuffix)
}

// Install writes the shim for o.Hook and returns what it did. A hook
// that is there and is not a shim is refused (ExistsError), moved aside
// to run first (Chain) or kept as a backup (Force); it is never lost.
func (r *Repo) Install(ctx context.Context, o InstallOptions) (string, error) {
	if !slices.Contains(Hooks, o.Hook) || !slices.Contains(Modes, o.Mode) {
		return "", fmt.Errorf("install: unknown hook %q or mode %q", o.Hook, o.Mode)
	}
	if o.Chain && o.Force {
		return "", errors.New("install: --chain and --force exclude each other")
	}
	path, err := r.hookPath(ctx, o.Hook)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	did, err := moveAside(path, o)
	if err != nil {
		return "", err
	}
	if err := (workspace.Atomic{Perm: 0o755}).WriteFile(path, []byte(shim(o))); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	return fmt.Sprintf("installed %s (%s mode)%s", path, o.Mode, did), nil
}

// moveAside makes room for the shim at path and says what it kept.
func moveAside(path string, o InstallOptions) (string, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	if isShim(path) {
		return "", nil // an update of our own
	}
	var to, did string
	switch {
	case o.Chain:
		to, did = path+chainedSuffix, "; the hook that was there runs first, from "+path+chainedSuffix
	case o.Force:
		to, did = path+backupSuffix, "; the hook that was there is kept as "+path+backupSuffix
	default:
		return "", &ExistsError{Path: path}
	}
	if _, err := os.Lstat(to); err == nil {
		return "", fmt.Errorf("install: %s already exists: move it away first, nothing was changed", to)
	}
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	return did, nil
}

// shim is the hook script: find loop-action and exec `hook run`.
func shim(o InstallOptions) string {
	var args []string
	if o.Config != "" {
		args = append(args, "-c", quote(o.Config))
	}
	args = append(args, "hook", "run")
	if o.Mode != "gate" {
		args = append(args, "--mode", o.Mode)
	}
	args = append(args, o.Hook)
	skip := "git push --no-verify"
	if o.Hook == "pre-commit" {
		skip = "git commit --no-verify"
	}
	return fmt.Sprintf(`#!/bin/sh
%s%s mode=%s
# Installed by 'loop-action hook install'; 'loop-action hook uninstall' removes it
# and puts back the hook that was here before, if any.
# Skip it once: %s, or LOOP_HOOK=skip.
loop_action=$(command -v loop-action) || loop_action=%s
if [ ! -x "$loop_action" ]; then
	echo "loop-action hook: loop-action is neither on PATH nor at "%s": refused (%s skips the hook)" >&2
	exit 1
fi
exec "$loop_action" %s "$@"
`, marker, o.Hook, o.Mode, skip, quote(o.Binary), quote(o.Binary), skip, strings.Join(args, " "))
}

// quote quotes s for sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hookPath is where git looks for the hook: core.hooksPath (relative or
// absolute) or the hooks directory of the common git directory.
func (r *Repo) hookPath(_ context.Context, hook string) (string, error) {
	if r.hooks == "" {
		return "", errors.New("find the hooks directory: the repository was not opened")
	}
	return filepath.Join(r.hooks, hook), nil
}

// shimInfo returns the hook and mode a shim at path names; ok is false
// when path is no shim (or cannot be read).
func shimInfo(path string) (hook, mode string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 3 && sc.Scan(); i++ {
		if rest, found := strings.CutPrefix(sc.Text(), marker); found {
			hook, mode, _ = strings.Cut(rest, " mode=")
			return hook, mode, true
		}
	}
	return "", "", false
}

func isShim(path string) bool { _, _, ok := shimInfo(path); return ok }

// RunChained runs the hook that install --chain kept, if there is one, as
// git would have run it: in dir, with git's environment and arguments and
// with input on stdin. A chained hook that fails fails the hook. One that
// is not executable is skipped, as git skips it, with a note on stderr.
func (r *Repo) RunChained(ctx context.Context, hook string, args []string, input []byte, env []string, dir string, stdout, stderr io.Writer) error {
	path, err := r.hookPath(ctx, hook)
	if err != nil {
		return err
	}
	path += chainedSuffix
	fi, err := os.Stat(path)
	if err != nil {
		return nil // nothing chained
	}
	if fi.Mode()&0o111 == 0 {
		fmt.Fprintf(stderr, "loop-action hook: %s is not executable: skipped, as git would skip it\n", path)
		return nil
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, env, bytes.NewReader(input), stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the %s hook that was there before loop-action's (%s) failed: %w", hook, path, err)
	}
	return nil
}
