package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// ReadCheckout reads the git settings a checkout of the loop root root
// converts files with — core.autocrlf and core.eol, as git resolves them
// there (the system's, the user's and the repository's configuration, and
// any GIT_CONFIG_* in env: a Windows runner's system config says
// core.autocrlf=true; go-git resolves none of that) — for the composition
// root to pass to every snapshot and restore of the root
// (workspace.Checkout). It runs one `git config` in root, with env (nil is
// this process's) under GitEnv, which turns off hooks and fsmonitor; `git
// config` runs no other command. Where git is not installed, nothing
// checked the root out: the zero value (a Linux runner's defaults). A
// value git itself would refuse is an error naming it.
func ReadCheckout(ctx context.Context, root string, env []string) (workspace.Checkout, error) {
	cmd := exec.CommandContext(ctx, "git", "config", "-z", "--get-regexp", `^core\.(autocrlf|eol)$`)
	cmd.Dir, cmd.Env = root, GitEnv(env)
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return workspace.Checkout{}, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1 && len(ee.Stderr) == 0: // neither is set
		return workspace.Checkout{}, nil
	case errors.As(err, &ee):
		return workspace.Checkout{}, fmt.Errorf("read core.autocrlf and core.eol in %q: %w: %s", root, err, bytes.TrimSpace(ee.Stderr))
	case err != nil:
		return workspace.Checkout{}, fmt.Errorf("read core.autocrlf and core.eol in %q: %w", root, err)
	}
	return parseCheckout(out)
}

// parseCheckout reads the output of `git config -z --get-regexp`: entries
// "key\nvalue\x00", or "key\x00" for a key set without a value (which git
// takes for true); the last entry of a key wins, as it does for git.
func parseCheckout(out []byte) (workspace.Checkout, error) {
	var k workspace.Checkout
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) == 0 {
			continue
		}
		key, value, hasValue := strings.Cut(string(e), "\n")
		var err error
		switch key {
		case "core.autocrlf":
			k.AutoCRLF, err = autocrlfOf(value, hasValue)
		case "core.eol":
			k.EOL, err = eolOf(value)
		}
		if err != nil {
			return workspace.Checkout{}, fmt.Errorf("git config: %s: %w", key, err)
		}
	}
	return k, nil
}

// autocrlfOf is core.autocrlf as git reads it: "input" in any case, else
// a boolean.
func autocrlfOf(v string, hasValue bool) (string, error) {
	if strings.EqualFold(v, "input") {
		return "input", nil
	}
	if !hasValue {
		return "true", nil
	}
	b, err := gitBool(v)
	if err != nil {
		return "", err
	}
	return strconv.FormatBool(b), nil
}

// eolOf is core.eol as git reads it: lf, crlf or native, in any case.
func eolOf(v string) (string, error) {
	switch l := strings.ToLower(v); l {
	case "lf", "crlf", "native":
		return l, nil
	}
	return "", fmt.Errorf("%q is not lf, crlf or native", v)
}

// gitBool is git's git_config_bool: true, yes, on, false, no, off and the
// empty string in any case, or an integer (non-zero is true).
func gitBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off", "":
		return false, nil
	}
	if n, err := strconv.ParseInt(v, 0, 64); err == nil {
		return n != 0, nil
	}
	return false, fmt.Errorf("%q is not a boolean", v)
}
