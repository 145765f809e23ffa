//go:build unix

package subprocess_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// TestCancelKillsTheGroup: a shell that started a long child in the
// background (as a run step starts go build) is cancelled: the child dies
// with it, so that nothing it started outlives the test, and Wait returns.
// Without the group kill only the shell dies and the child holds the pipe
// for ten minutes.
func TestCancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The child holds fd 3 (w) open until it dies; the shell waits for it.
	cmd := subprocess.Command(ctx, "sh", "-c", "sleep 600 & echo started >&3; wait")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if line != "started\n" {
		t.Fatalf("the shell did not start its child: %q, %v", line, err)
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("a cancelled command succeeded")
	}
	closed := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, r); closed <- err }()
	select {
	case err := <-closed: // every holder of the pipe is gone
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a bound only: SIGKILL takes far less
		t.Fatal("the shell's child still runs a minute after the cancellation")
	}
}
