package process

import (
	"os/exec"
	"testing"
	"time"
)

// TestSweepLetsStartsThrough: a sweep that finds a start under way (one
// whose child is slow to execute) does not hold off the starts that come
// after it while it waits. Not parallel: it holds a start open by hand.
func TestSweepLetsStartsThrough(t *testing.T) {
	defer func(d time.Duration) { startsWait = d }(startsWait)
	startsWait = time.Minute // the sweep waits for the start under way to end
	live.Lock()
	live.starting++
	live.Unlock()
	live.starts.RLock()
	held := true
	release := func() {
		if held {
			held = false
			live.starts.RUnlock()
			startEnded()
		}
	}
	defer release()
	swept := make(chan error, 1)
	go func() { swept <- sweepLive(false) }()
	time.Sleep(50 * time.Millisecond) // let the sweep start waiting

	cmd := exec.Command("true")
	setGroup(cmd)
	started := make(chan error, 1)
	go func() { started <- startLeader(cmd) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(promptly):
		release()
		<-started
		t.Error("a start waited behind a sweep that waited for another start")
	}
	release()
	if err := <-swept; err != nil {
		t.Error(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the child the sweep had to spare: %v", err)
	}
	forget(cmd.Process.Pid)
}
