package process

import (
	"os/exec"
	"testing"
)

// TestPollExitLeavesAZombie: pollExit waits through the poller until the
// child has exited, and leaves it unreaped, so that its pid stays its own
// until cmd.Wait reaps it.
func TestPollExitLeavesAZombie(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", "sleep 0.1; exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited, polled := pollExit(cmd.Process.Pid)
	if !polled {
		_ = cmd.Wait()
		t.Skip("pidfds cannot be polled here: awaitExit blocks in waitid instead")
	}
	s, ok := readStat(cmd.Process.Pid)
	if !exited || !ok || s.state != 'Z' {
		t.Errorf("pollExit = %v; the child is in state %q (found: %v), want an unreaped zombie", exited, s.state, ok)
	}
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("cmd.Wait after pollExit: %v, want exit status 3", err)
	}
}
