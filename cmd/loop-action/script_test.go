package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts drives the real binary with the scripts in testdata/script:
// the small commands, validate, plan and gate.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams(t, "../../testdata/script", false))
}

// TestRunScripts drives real loops end to end with the scripts in
// testdata/script/run: scripted agents do the work, the real binary runs,
// resumes, reports and exports, and the scripts check what it measured,
// recorded and left behind.
func TestRunScripts(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agents are POSIX sh")
	}
	testscript.Run(t, scriptParams(t, "../../testdata/script/run", true))
}

// scriptParams is the one testscript setup of the CLI's scripts in dir.
// Every script gets NO_COLOR=1, $GOLDEN (testdata/script/golden) and
// $QUICKSTART (examples/quickstart); with agents, also the scripted agents
// of testdata/agents in $WORK/agents (not for the others: they would change
// the snapshot of a loop root at $WORK). On $PATH: loop-action, the binary
// under test, and expect-exit (see expectExit). Besides testscript's own
// commands the scripts have:
//
//	exits N PROG ARGS...      run PROG like exec and require exit code N
//	cmpnorm FILE GOLDEN       compare (stdout, stderr or a file) with a golden file after
//	                          normalize; -update rewrites it
//	cmpout FILE GOLDEN        the same after normalizeRun, for a run's output
//	events TYPE [K=V|K~RE]... N
//	                          the last stdout (ledger --json) holds exactly N events of TYPE
//	                          whose field K is V (or matches RE)
//	before TYPE[,K=V] TYPE[,K=V]
//	                          the first event matching the first comes before the first matching the second
//	ledgerok [-restarts] [CAP]
//	                          the last stdout is a well-formed ledger: JSON lines, seq 1..N,
//	                          each iteration started once (with -restarts: again after an
//	                          interruption), in order, and (with CAP) none above CAP
//	manifest DIR              DIR/manifest.json lists every other file of DIR with its size and sha256
//	crlf FILE                 FILE ends every line with CRLF and its last line is its only exit /b
//	timeline FILE overlap|serial A B
//	                          nodes A and B ran at once, or one ended before the other started
//	gone FILE                 no process whose pid FILE lists is alive (zombies count as gone)
//	waitfile FILE             wait (up to a minute) until FILE exists and is not empty
//	stopwatch                 start a stopwatch
//	elapsed MAX               less than MAX (a Go duration) has passed since stopwatch
func scriptParams(t *testing.T, dir string, agents bool) testscript.Params {
	abs := func(rel string) string {
		p, err := filepath.Abs(rel)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	agentsDir, golden, quickstart := abs("../../testdata/agents"), abs("../../testdata/script/golden"), abs("../../examples/quickstart")
	return testscript.Params{
		Dir:           dir,
		UpdateScripts: *update,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits":     cmdExits,
			"cmpnorm":   cmpWith("cmpnorm", func(_ *testscript.TestScript, s string) string { return normalize(s) }),
			"cmpout":    cmpWith("cmpout", func(ts *testscript.TestScript, s string) string { return normalizeRun(s, ts.Getenv("WORK")) }),
			"events":    cmdEvents,
			"before":    cmdBefore,
			"ledgerok":  cmdLedgerOK,
			"manifest":  cmdManifest,
			"crlf":      cmdCRLF,
			"timeline":  cmdTimeline,
			"gone":      cmdGone,
			"waitfile":  cmdWaitFile,
			"stopwatch": cmdStopwatch,
			"elapsed":   cmdElapsed,
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("NO_COLOR", "1")
			e.Setenv("GOLDEN", golden)
			e.Setenv("QUICKSTART", quickstart)
			if !agents {
				return nil
			}
			return copyDir(agentsDir, filepath.Join(e.WorkDir, "agents"))
		},
	}
}

// cmdExits runs a program as exec does and checks its exit code, which
// exec cannot: exits 4 loop-action run.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// expectExit is the program expect-exit, for a script to check the exit
// code of a command it runs in the background, where exits cannot go:
//
//	exec expect-exit 1 loop-action run &bg&
//
// It runs PROG with its own standard streams, passes on the signals
// testscript sends (kill -INT, and SIGQUIT at cleanup) and exits 0 when
// PROG exited N, 1 with a message on stderr otherwise. A SIGKILL would
// leave PROG running; testscript sends one only when SIGQUIT did not end
// the program in time.
func expectExit() int {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: expect-exit N PROG ARGS...")
		return 2
	}
	want, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "expect-exit: %v\n", err)
		return 2
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "expect-exit: %v\n", err)
		return 1
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "expect-exit: %v\n", err)
		return 1
	}
	if got := cmd.ProcessState.ExitCode(); got != want {
		fmt.Fprintf(os.Stderr, "expect-exit: %s exited %d (%v), want %d\n", os.Args[2], got, cmd.ProcessState, want)
		return 1
	}
	return 0
}

// copyDir copies the regular files of src (not its subdirectories) into
// dst, keeping their modes.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

var durationRE = regexp.MustCompile(`\b\d+\.\ds\b`)

// normalize replaces what differs from run to run (durations) with a fixed
// placeholder, so outputs can be compared with golden files.
func normalize(s string) string { return durationRE.ReplaceAllString(s, "N.Ns") }

// What differs from run to run in a run's output besides durations:
// where $WORK is, wall clock rounded to seconds, snapshot hashes, clock
// times, and token counts estimated from prompts that name $WORK.
var runNoise = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?(?:s|ms|µs|ns) wall clock`), "N wall clock"},
	{regexp.MustCompile(`\b[0-9a-f]{40}\b`), "SNAPSHOT"},
	{regexp.MustCompile(`\b(snapshot|now) [0-9a-f]{7}\b`), "$1 SNAP"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?`), "TIME"},
	{regexp.MustCompile(`\b\d+ tokens \(some estimated\)`), "N tokens (some estimated)"},
	{regexp.MustCompile(`\b\d+ tokens \(estimated\)`), "N tokens (estimated)"},
}

func normalizeRun(s, work string) string {
	s = normalize(s)
	if work != "" {
		s = strings.ReplaceAll(s, work, "$WORK")
	}
	for _, n := range runNoise {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// cmpWith makes the command name, which compares stdout, stderr or a file
// with a golden file after norm: name stdout $GOLDEN/x.txt. With -update it
// writes the golden file instead.
func cmpWith(name string, norm func(ts *testscript.TestScript, s string) string) func(*testscript.TestScript, bool, []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: %s stdout|stderr|file golden", name)
		}
		got := norm(ts, ts.ReadFile(args[0])) // ReadFile reads stdout and stderr by name
		golden := ts.MkAbs(args[1])
		if *update {
			ts.Check(os.WriteFile(golden, []byte(got), 0o644))
			return
		}
		want, err := os.ReadFile(golden)
		ts.Check(err)
		if diff := cmp.Diff(string(want), got); diff != "" {
			ts.Fatalf("%s differs from %s (-want +got):\n%s", args[0], args[1], diff)
		}
	}
}
