package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// runBound bounds every run of the built loop-action: a run that hangs
// is killed, with its process group, and fails the test. It decides
// nothing else.
const runBound = 2 * time.Minute

// builtLoopAction is loop-action built by go build, once for every test
// of the package (a build is the costliest step of several tests, and
// they ran one each). The file is written by go build, never by this
// process, and nothing here opens it for writing: a file this process
// wrote is open for writing in every child a parallel test forks until
// that child execs, and running it then fails with "text file busy"
// (ETXTBSY) — which it did in CI, when each test copied the binary into
// its own directory.
var builtLoopAction = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "loop-action-bin-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "loop-action")
	if b, err := subprocess.Command(ctx, "go", "build", "-o", out, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build loop-action: %v\n%s", err, b)
	}
	return out, nil
})

// buildLoopAction is builtLoopAction, failing the test when it cannot
// be built.
func buildLoopAction(t *testing.T) string {
	t.Helper()
	bin, err := builtLoopAction()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// loopActionCmd is bin run as loop-action in dir, bounded by runBound.
func loopActionCmd(t *testing.T, bin, dir string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(t.Context(), runBound)
	t.Cleanup(cancel)
	cmd := subprocess.Command(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	return cmd
}
