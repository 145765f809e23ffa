//go:build unix

package state_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// saverBound bounds one helper saver's life: a saver that stops saving
// fails the test instead of hanging it. It decides nothing else.
const saverBound = 2 * time.Minute

// saver is how a helper saver process is started: the helper test to
// run, its extra environment and its working directory ("" for this
// one's).
type saver struct {
	helper string
	env    []string
	dir    string
}

// announce is what a helper saver prints: "ready N" once it resumed the
// run at iteration N, and "saved N" after each save that returned.
func announce(what string, n int) { fmt.Printf("%s %d\n", what, n) }

// kill starts the helper saver, waits until it said it is ready and then
// that it saved saves times, lets it run for delay more (the kill lands
// anywhere in a save) and kills it with SIGKILL. It returns the last
// iteration the saver said it had: the one it resumed at, or saved.
// Waiting for counted saves, not for time, is what makes a round advance
// the run however slow the machine.
func (s saver) kill(t *testing.T, saves int, delay time.Duration) (last int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), saverBound)
	defer cancel()
	cmd := subprocess.Command(ctx, os.Args[0], "-test.run=^"+s.helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Dir = s.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done(): // the test failed, or is done
				return
			}
		}
	}()
	ready, said := false, 0
	take := func(line string) {
		var what string
		var n int
		if _, err := fmt.Sscanf(line, "%s %d", &what, &n); err != nil || (what != "ready" && what != "saved") {
			return // the testing package's own output
		}
		ready, last = true, n
		if what == "saved" {
			said++
		}
	}
	for !ready || said < saves {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("helper saver ended after %d saves, before the kill; stderr:\n%s", said, stderr.Bytes())
			}
			take(line)
		case <-ctx.Done():
			t.Fatalf("helper saver made %d of %d saves within %v (ready: %v); stderr:\n%s", said, saves, saverBound, ready, stderr.Bytes())
		}
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for line := range lines { // what it said before it died
		take(line)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 || ctx.Err() != nil {
		t.Fatalf("helper saver ended with %v before the kill; stderr:\n%s", err, stderr.Bytes())
	}
	return last
}

// checkKilledAt fails the test unless n, the iteration the store holds
// after the kill, is the last one the saver said it had, or the next (a
// save that landed before it could say so), and never behind committed.
func checkKilledAt(t *testing.T, round, committed, last, n int) {
	t.Helper()
	if n < committed {
		t.Fatalf("round %d: the checkpoint went back from iteration %d to %d", round, committed, n)
	}
	if n != last && n != last+1 {
		t.Fatalf("round %d: the saver had iteration %d when killed, the store holds %d", round, last, n)
	}
}
