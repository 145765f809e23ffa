package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killLoop is the loop the kill test interrupts: a fixer that gets it right
// on its 6th attempt, a check that takes about 100 ms, and a cap of 8, so
// an uninterrupted run succeeds at iteration 6. no_progress is off: every
// wrong attempt looks the same to the gate.
const killLoop = `name = "killed"

[stop]
max_iterations = 8
no_progress = 0
perturb_after = 0

[providers.script]
command = ["env", "FIX_ON=6", "sh", "agents/fixer.sh"]

[[node]]
name = "fixer"
provider = "script"
goals = ["tests", "summary"]

[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sleep 0.1; sh test.sh"

[[goal]]
name = "summary"
  [[goal.check]]
  type = "file_exists"
  path = "out/summary.md"
  non_empty = true

[export]
paths = ["out/**"]
`

// killTrials is how many runs are killed at a random instant; the seed is
// logged, and LOOP_KILL_SEED replays it.
const killTrials = 20

// TestKillAnyInstant kills `run` with SIGKILL at random instants spread
// over a whole run, then continues it to the end without interruption. Every
// trial must end as an uninterrupted run does (status, iterations, exit
// code, export), with a ledger that parses, numbers its events 1..N without
// gap or duplicate, and never starts more iterations than the cap: a run
// killed at any instant resumes with at most the in-flight iteration lost,
// and never from a torn state. A last subtest stops a run with SIGTERM
// instead, which must save it as cancelled.
func TestKillAnyInstant(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real runs for about half a minute")
	}
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL and POSIX sh agents")
	}
	t.Parallel()
	bin := buildLoopAction(t)
	fixture := killFixture(t)

	// The reference: the same loop, uninterrupted.
	ref := trialDir(t, fixture)
	began := time.Now()
	refCode := runLoopAction(t, bin, ref, "run")
	took := time.Since(began)
	refEnd := checkFinished(t, bin, ref, false)
	if refEnd.Status != "success" || refEnd.Iteration != 6 || refCode != exitSuccess {
		t.Fatalf("the uninterrupted run ended %s after %d iterations (exit %d); want success after 6", refEnd.Status, refEnd.Iteration, refCode)
	}
	t.Logf("uninterrupted: %s after %d iterations in %s", refEnd.Status, refEnd.Iteration, took.Round(time.Millisecond))

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOOP_KILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("LOOP_KILL_SEED: %v", err)
		}
	}
	t.Logf("seed %d (replay with LOOP_KILL_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	span := took + took/5 // a few kills land after the run has ended, which must be harmless too
	for i := range killTrials {
		delay := time.Duration(rng.Int64N(int64(span)))
		// Alternate how the run is continued: resume, or run again.
		cont := "resume"
		if i%2 == 1 {
			cont = "run"
		}
		t.Run(fmt.Sprintf("trial%02d", i), func(t *testing.T) {
			dir := trialDir(t, fixture)
			code := killAndContinue(t, bin, dir, cont, func(<-chan struct{}) { time.Sleep(delay) })
			t.Logf("killed after %s, then %s", delay.Round(time.Millisecond), cont)
			checkLikeReference(t, bin, dir, refEnd, refCode, code)
		})
	}

	// The riskiest instant: right after the checkpoint that says success,
	// before the success export is written. A few trials aim at it.
	for i := range 4 {
		t.Run(fmt.Sprintf("aimed%02d", i), func(t *testing.T) {
			dir := trialDir(t, fixture)
			cp := filepath.Join(dir, ".loop", "state", "runs", "killed", "local", "checkpoint.json")
			code := killAndContinue(t, bin, dir, "resume", func(exited <-chan struct{}) {
				for {
					if b, err := os.ReadFile(cp); err == nil && successRE.Match(b) {
						return
					}
					select {
					case <-exited:
						return
					case <-time.After(200 * time.Microsecond):
					}
				}
			})
			checkLikeReference(t, bin, dir, refEnd, refCode, code)
		})
	}

	// SIGTERM, unlike SIGKILL, lets the run stop quietly.
	t.Run("sigterm", func(t *testing.T) { terminateQuietly(t, bin, fixture) })
}

// killFixture writes the project the kill test runs in: the quickstart's
// calc.sh and test.sh, the scripted agents and killLoop.
func killFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"calc.sh", "test.sh"} {
		b, err := os.ReadFile(filepath.Join("../../examples/quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "calc.sh" && !bytes.Contains(b, []byte("$1 - $2")) {
			t.Fatalf("examples/quickstart/calc.sh does not hold the seeded bug ($1 - $2); was the quickstart run in place?")
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyDir("../../testdata/agents", filepath.Join(dir, "agents")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "loop.toml"), []byte(killLoop), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// trialDir is a fresh copy of the fixture.
func trialDir(t *testing.T, fixture string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "root")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"", "agents"} {
		if err := copyDir(filepath.Join(fixture, sub), filepath.Join(dir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runLoopAction runs the binary to its end and returns its exit code.
func runLoopAction(t *testing.T, bin, dir string, args ...string) int {
	t.Helper()
	cmd := loopActionCmd(t, bin, dir, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("loop-action %s: %v\n%s", strings.Join(args, " "), err, &out)
	return -1
}

var successRE = regexp.MustCompile(`"status":\s*"success"`)

// killAndContinue starts run, waits as wait says, kills it with SIGKILL,
// waits until no process it started is left in dir (as after a machine
// dies), and continues the run with cont. It returns cont's exit code.
//
// A run killed before its first checkpoint (during iteration 1) has
// nothing to resume: resume says so and exits 2, and run starts it anew.
func killAndContinue(t *testing.T, bin, dir, cont string, wait func(exited <-chan struct{})) int {
	t.Helper()
	run := loopActionCmd(t, bin, dir, "run")
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = run.Wait(); close(exited) }()
	wait(exited)
	_ = run.Process.Signal(syscall.SIGKILL)
	<-exited
	waitForOrphans(t, dir)

	_, err := os.Stat(filepath.Join(dir, ".loop", "state", "runs", "killed", "local", "checkpoint.json"))
	checkpointed := err == nil
	if !checkpointed && cont == "resume" {
		cmd := loopActionCmd(t, bin, dir, "resume")
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(b), "no runs yet") {
			t.Fatalf("resume of a run killed before its first checkpoint: %v\n%s\nwant exit 2, no runs yet", err, b)
		}
		cont = "run"
	}
	return runLoopAction(t, bin, dir, cont)
}

// waitForOrphans waits until no process has its working directory in dir:
// SIGKILL does not reach the agents and checks the run started in their
// own process groups, and a machine that dies takes them with it.
func waitForOrphans(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/cwd"); err != nil {
		time.Sleep(time.Second)
		return
	}
	deadline := time.Now().Add(runBound) // a bound only: they end in moments
	for {
		left := processesIn(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v still run in %s", left, dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func processesIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || processGone(pid) {
			continue
		}
		if cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// finished is what the kill test compares between runs.
type finished struct {
	Status    string `json:"status"`
	Iteration int    `json:"iteration"`
	MaxIter   int    `json:"max_iterations"`
	Ledger    int    `json:"ledger_events"`
}

// checkFinished loads the checkpoint with status --json and checks the
// ledger with ledger --json.
func checkFinished(t *testing.T, bin, dir string, restarts bool) finished {
	t.Helper()
	out, err := loopActionCmd(t, bin, dir, "status", "--json").Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("status --json: %v", err)
	}
	var f finished
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("status --json does not load: %v\n%s", err, out)
	}
	led, err := loopActionCmd(t, bin, dir, "ledger", "--json").Output()
	if err != nil {
		t.Fatalf("ledger --json: %v", err)
	}
	events, err := parseLedger(string(led))
	if err != nil {
		t.Fatalf("ledger --json does not parse: %v", err)
	}
	started, err := checkLedger(events, 8, restarts)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	if started != f.Iteration && !(restarts && started == f.Iteration+1) {
		t.Errorf("the ledger starts iteration %d last; the checkpoint has completed %d", started, f.Iteration)
	}
	if len(events) != f.Ledger {
		t.Errorf("ledger --json prints %d events; the checkpoint counts %d", len(events), f.Ledger)
	}
	runStarted := 0
	for _, e := range events {
		if e.str("type") == "run_started" {
			runStarted++
		}
	}
	if runStarted != 1 {
		t.Errorf("%d run_started events, want 1", runStarted)
	}
	return f
}

// checkLikeReference checks that a trial ended as the uninterrupted run did.
func checkLikeReference(t *testing.T, bin, dir string, ref finished, refCode, code int) {
	t.Helper()
	got := checkFinished(t, bin, dir, false)
	if got.Status != ref.Status || got.Iteration != ref.Iteration || code != refCode {
		t.Errorf("ended %s after %d iterations (exit %d); uninterrupted: %s after %d (exit %d)",
			got.Status, got.Iteration, code, ref.Status, ref.Iteration, refCode)
	}
	if ref.Status != "success" {
		return
	}
	export := filepath.Join(dir, ".loop", "export", "killed-success")
	if err := verifyManifest(export); err != nil {
		t.Errorf("the success export: %v", err)
	}
	// Nothing half-written is left beside it.
	entries, _ := os.ReadDir(filepath.Dir(export))
	for _, e := range entries {
		if e.Name() != "killed-success" {
			t.Errorf("%s is left in .loop/export", e.Name())
		}
	}
}

// terminateQuietly stops a run with SIGTERM in the middle of an
// iteration: it saves its checkpoint as cancelled (no escalation, no node
// failure), leaves none of its agents or checks running, and resume then
// ends it as an uninterrupted run does.
func terminateQuietly(t *testing.T, bin, fixture string) {
	dir := trialDir(t, fixture)
	cp := filepath.Join(dir, ".loop", "state", "runs", "killed", "local", "checkpoint.json")

	run := loopActionCmd(t, bin, dir, "run")
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// Once iteration 2 is checkpointed, iteration 3 is under way.
	iter2 := regexp.MustCompile(`"iteration":\s*2,`)
	deadline := time.Now().Add(runBound) // a bound only
	for {
		if b, err := os.ReadFile(cp); err == nil && iter2.Match(b) {
			break
		}
		if time.Now().After(deadline) {
			_ = run.Process.Kill()
			t.Fatalf("no checkpoint of iteration 2 within %v:\n%s", runBound, &out)
		}
		time.Sleep(time.Millisecond)
	}
	_ = run.Process.Signal(syscall.SIGTERM)
	err := run.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUnsuccessful {
		t.Errorf("run after SIGTERM: %v, want exit %d\n%s", err, exitUnsuccessful, &out)
	}
	if left := processesIn(dir); len(left) > 0 {
		t.Errorf("processes %v still run in the loop root after the run stopped", left)
	}

	got := checkFinished(t, bin, dir, true)
	if got.Status != "cancelled" || got.Iteration != 2 {
		t.Errorf("after SIGTERM: %s after %d iterations, want cancelled after 2\n%s", got.Status, got.Iteration, &out)
	}
	status, _ := loopActionCmd(t, bin, dir, "status", "--json").Output()
	if !regexp.MustCompile(`"node_failures":\s*0,`).Match(status) {
		t.Errorf("a cancelled iteration counted a node failure:\n%s", status)
	}
	if !regexp.MustCompile(`"stop_detail":\s*"cancelled during iteration 3`).Match(status) {
		t.Errorf("the stop detail does not say which iteration was cancelled:\n%s", status)
	}

	if code := runLoopAction(t, bin, dir, "resume"); code != exitSuccess {
		t.Errorf("resume exited %d, want 0", code)
	}
	if got := checkFinished(t, bin, dir, true); got.Status != "success" || got.Iteration != 6 {
		t.Errorf("resumed: %s after %d iterations, want success after 6", got.Status, got.Iteration)
	}
	if err := verifyManifest(filepath.Join(dir, ".loop", "export", "killed-success")); err != nil {
		t.Errorf("the success export: %v", err)
	}
}

// hashLoop measures a workspace holding a sparse terabyte, with
// run.max_file_size raised so that it is hashed, not refused: reading it
// takes many minutes, so only the run's deadline or a signal can end
// that walk.
const hashLoop = `name = "hashing"

[stop]
max_iterations = 2
max_wall_clock = "%s"

[run]
max_file_size = "2TiB"

[providers.script]
command = ["sh", "-c", "cat >/dev/null"]

[[node]]
name = "builder"
provider = "script"
goals = ["g"]

[[goal]]
name = "g"
  [[goal.check]]
  type = "file_exists"
  path = "never.txt"
`

// TestStopWhileHashing: a run whose measurement is hashing a sparse
// terabyte ends promptly after SIGTERM, or after its wall-clock deadline,
// as a stopped run does (exit 1), with a checkpoint that loads — its save
// reads nothing of the loop root. The waits are bounds only, so that the
// test cannot hang: without the defences the run hashes for many minutes.
func TestStopWhileHashing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sparse files and /proc")
	}
	t.Parallel()
	bin := buildLoopAction(t)
	for _, tc := range []struct {
		name, wall, status string
		signal             bool
	}{
		{"sigterm", "1h", "cancelled", true},
		{"deadline", "2s", "wall-clock", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "loop.toml"), []byte(fmt.Sprintf(hashLoop, tc.wall)), 0o644); err != nil {
				t.Fatal(err)
			}
			big := filepath.Join(dir, "big.bin")
			if err := os.WriteFile(big, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(big, 1<<40); err != nil {
				t.Skipf("no sparse terabyte here: %v", err)
			}
			run := loopActionCmd(t, bin, dir, "run")
			var out bytes.Buffer
			run.Stdout, run.Stderr = &out, &out
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- run.Wait() }()
			if tc.signal {
				waitReading(t, run.Process.Pid, big, exited)
				_ = run.Process.Signal(syscall.SIGTERM)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(2 * time.Minute):
				_ = run.Process.Kill()
				t.Fatalf("the run was still going 2 minutes on:\n%s", &out)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUnsuccessful {
				t.Errorf("run: %v, want exit %d\n%s", err, exitUnsuccessful, &out)
			}
			status, err := loopActionCmd(t, bin, dir, "status", "--json").Output()
			var f finished
			if jerr := json.Unmarshal(status, &f); jerr != nil || f.Status != tc.status {
				t.Errorf("status --json: %v, %v: %s, want %s", err, jerr, status, tc.status)
			}
		})
	}
}

// waitReading waits until the process pid holds path open: the walk has
// begun hashing it.
func waitReading(t *testing.T, pid int, path string, exited <-chan error) {
	t.Helper()
	fds := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == path {
				return
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the run ended before hashing %s: %v", path, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("the run did not open %s within a minute", path)
}
