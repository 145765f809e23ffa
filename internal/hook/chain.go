package hook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
)

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
