package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The commands of the run scripts that check what a run recorded and left
// behind (see scriptParams for them all).

// ledgerEvent is an event of ledger --json, read generically so that the
// scripts can match any field.
type ledgerEvent map[string]any

func (e ledgerEvent) str(key string) string {
	v, ok := e[key]
	if !ok || v == nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (e ledgerEvent) seq() int {
	n, _ := e["seq"].(float64)
	return int(n)
}

// parseLedger reads JSON lines; every line must be one object.
func parseLedger(data string) ([]ledgerEvent, error) {
	var out []ledgerEvent
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, fmt.Errorf("line %d is blank", n)
		}
		var e ledgerEvent
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("line %d: %v: %s", n, err, line)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d holds more than one JSON value: %s", n, line)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

func scriptLedger(ts *testscript.TestScript) []ledgerEvent {
	events, err := parseLedger(ts.ReadFile("stdout"))
	if err != nil {
		ts.Fatalf("stdout is not a ledger (run ledger --json first): %v", err)
	}
	return events
}

// matcher matches events by type and fields: TYPE, then K=V or K~RE.
type matcher struct {
	typ    string
	equal  map[string]string
	regexp map[string]*regexp.Regexp
	text   string
}

func newMatcher(typ string, conds []string) (*matcher, error) {
	m := &matcher{typ: typ, equal: map[string]string{}, regexp: map[string]*regexp.Regexp{}, text: strings.Join(append([]string{typ}, conds...), " ")}
	for _, c := range conds {
		if k, v, ok := strings.Cut(c, "="); ok && !strings.Contains(k, "~") {
			m.equal[k] = v
			continue
		}
		k, re, ok := strings.Cut(c, "~")
		if !ok {
			return nil, fmt.Errorf("condition %q is neither K=V nor K~RE", c)
		}
		r, err := regexp.Compile(re)
		if err != nil {
			return nil, err
		}
		m.regexp[k] = r
	}
	return m, nil
}

func (m *matcher) match(e ledgerEvent) bool {
	if e.str("type") != m.typ {
		return false
	}
	for k, v := range m.equal {
		if e.str(k) != v {
			return false
		}
	}
	for k, re := range m.regexp {
		if !re.MatchString(e.str(k)) {
			return false
		}
	}
	return true
}

func cmdEvents(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: events TYPE [K=V|K~RE]... N")
	}
	want, err := strconv.Atoi(args[len(args)-1])
	ts.Check(err)
	m, err := newMatcher(args[0], args[1:len(args)-1])
	ts.Check(err)
	var got []string
	for _, e := range scriptLedger(ts) {
		if m.match(e) {
			b, _ := json.Marshal(e)
			got = append(got, string(b))
		}
	}
	if len(got) != want {
		ts.Fatalf("%d events match %q, want %d:\n%s", len(got), m.text, want, strings.Join(got, "\n"))
	}
}

func cmdBefore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: before TYPE[,K=V] TYPE[,K=V]")
	}
	events := scriptLedger(ts)
	first := func(spec string) int {
		parts := strings.Split(spec, ",")
		m, err := newMatcher(parts[0], parts[1:])
		ts.Check(err)
		for _, e := range events {
			if m.match(e) {
				return e.seq()
			}
		}
		ts.Fatalf("no event matches %q", spec)
		return 0
	}
	if a, b := first(args[0]), first(args[1]); a >= b {
		ts.Fatalf("%s (seq %d) is not before %s (seq %d)", args[0], a, args[1], b)
	}
}

// checkLedger checks what every ledger must satisfy: seq numbers 1..N with
// no gap or duplicate, a known type on every event, and iteration_started
// events only for the iteration after the last one the gate ruled on,
// never above maxIter (when positive). Unless restarts is set, each
// iteration starts once: only a run stopped in the middle of an iteration
// (cancelled, or out of wall clock) records a start that it later repeats.
// It returns the last iteration started.
func checkLedger(events []ledgerEvent, maxIter int, restarts bool) (int, error) {
	known := []string{"run_started", "run_resumed", "budget_raised", "iteration_started", "perturbed",
		"node_dispatched", "node_succeeded", "node_failed", "node_skipped", "judge_retried",
		"protected_path_reverted", "git_path_reverted", "root_path_reverted", "measurement_voided", "uncarried_path_removed",
		"gate_evaluated", "goal_satisfied", "goal_revoked", "review_requested",
		"review_decided", "stage_opened", "stage_closed", "stop_triggered", "run_finished",
		"export_written", "checkpoint_saved"}
	if len(events) == 0 {
		return 0, fmt.Errorf("the ledger is empty")
	}
	started, ruled := 0, 0
	for i, e := range events {
		if e.seq() != i+1 {
			return 0, fmt.Errorf("event %d has seq %d, want %d: %v", i+1, e.seq(), i+1, e)
		}
		if !slices.Contains(known, e.str("type")) {
			return 0, fmt.Errorf("event %d has an unknown type %q", i+1, e.str("type"))
		}
		it, _ := strconv.Atoi(e.str("iteration"))
		switch e.str("type") {
		case "gate_evaluated":
			ruled = max(ruled, it)
		case "iteration_started":
			switch {
			case it != ruled+1:
				return 0, fmt.Errorf("iteration %d started (seq %d) after the gate ruled on iteration %d", it, e.seq(), ruled)
			case it <= started && !restarts:
				return 0, fmt.Errorf("iteration %d started twice (seq %d)", it, e.seq())
			case maxIter > 0 && it > maxIter:
				return 0, fmt.Errorf("iteration %d started (seq %d), above the cap %d", it, e.seq(), maxIter)
			}
			started = it
		}
	}
	return started, nil
}

func cmdLedgerOK(ts *testscript.TestScript, neg bool, args []string) {
	restarts := len(args) > 0 && args[0] == "-restarts"
	if restarts {
		args = args[1:]
	}
	if neg || len(args) > 1 {
		ts.Fatalf("usage: ledgerok [-restarts] [CAP]")
	}
	maxIter := 0
	if len(args) == 1 {
		var err error
		maxIter, err = strconv.Atoi(args[0])
		ts.Check(err)
	}
	if _, err := checkLedger(scriptLedger(ts), maxIter, restarts); err != nil {
		ts.Fatalf("%v", err)
	}
}

// verifyManifest checks an export's manifest.json: every file of dir but
// the manifest is listed once with its size and sha256, and nothing else.
func verifyManifest(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	var m struct {
		Files []struct {
			Path   string `json:"path"`
			Size   int64  `json:"size"`
			SHA256 string `json:"sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("manifest.json: %v", err)
	}
	listed := map[string]bool{}
	for _, f := range m.Files {
		if listed[f.Path] {
			return fmt.Errorf("manifest lists %s twice", f.Path)
		}
		listed[f.Path] = true
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return fmt.Errorf("manifest lists %s: %v", f.Path, err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 || int64(len(data)) != f.Size {
			return fmt.Errorf("%s: sha256 %s, %d bytes; the manifest says %s, %d bytes", f.Path, got, len(data), f.SHA256, f.Size)
		}
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel != "manifest.json" && !listed[rel] {
			return fmt.Errorf("%s is in the export but not in its manifest", rel)
		}
		return nil
	})
}

func cmdManifest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: manifest DIR")
	}
	if err := verifyManifest(ts.MkAbs(args[0])); err != nil {
		ts.Fatalf("%v", err)
	}
}

func cmdCRLF(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: crlf FILE")
	}
	text := ts.ReadFile(args[0])
	if !strings.HasSuffix(text, "\r\n") {
		ts.Fatalf("%s does not end with CRLF", args[0])
	}
	lines := strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n")
	for i, l := range lines {
		if strings.Contains(l, "\n") {
			ts.Fatalf("%s: line %d ends with a bare LF", args[0], i+1)
		}
	}
	exits := 0
	for _, l := range lines {
		if strings.Contains(strings.ToLower(l), "exit /b") {
			exits++
		}
	}
	if last := strings.ToLower(lines[len(lines)-1]); exits != 1 || !strings.HasPrefix(strings.TrimSpace(last), "exit /b") {
		ts.Fatalf("%s has %d exit /b lines and ends with %q; want exactly one, on the last line", args[0], exits, lines[len(lines)-1])
	}
}

// span is when a node ran, in the clock of the timeline file.
type span struct{ start, end int64 }

func readTimeline(path string) (map[string]span, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	spans := map[string]span{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("timeline line %q is not: start|end NODE NANOSECONDS", line)
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("timeline line %q: %v", line, err)
		}
		s := spans[f[1]]
		switch f[0] {
		case "start":
			if s.start != 0 {
				return nil, fmt.Errorf("node %s started twice", f[1])
			}
			s.start = ns
		case "end":
			if s.end != 0 {
				return nil, fmt.Errorf("node %s ended twice", f[1])
			}
			s.end = ns
		default:
			return nil, fmt.Errorf("timeline line %q is not: start|end NODE NANOSECONDS", line)
		}
		spans[f[1]] = s
	}
	return spans, nil
}

func cmdTimeline(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 || (args[1] != "overlap" && args[1] != "serial") {
		ts.Fatalf("usage: timeline FILE overlap|serial A B")
	}
	spans, err := readTimeline(ts.MkAbs(args[0]))
	ts.Check(err)
	a, b := spans[args[2]], spans[args[3]]
	for name, s := range map[string]span{args[2]: a, args[3]: b} {
		if s.start == 0 || s.end == 0 || s.end < s.start {
			ts.Fatalf("node %s did not run once from start to end: %+v", name, s)
		}
	}
	overlap := a.start < b.end && b.start < a.end
	switch {
	case args[1] == "overlap" && !overlap:
		ts.Fatalf("%s %+v and %s %+v did not run at once", args[2], a, args[3], b)
	case args[1] == "serial" && overlap:
		ts.Fatalf("%s %+v and %s %+v ran at once", args[2], a, args[3], b)
	}
}

// processGone reports whether pid no longer runs: it does not exist or is
// a zombie waiting for a parent to reap it.
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) STATE ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gone FILE")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		ts.Logf("no /proc: cannot check the processes")
		return
	}
	pids := strings.Fields(ts.ReadFile(args[0]))
	if len(pids) == 0 {
		ts.Fatalf("%s lists no pids", args[0])
	}
	for _, p := range pids {
		pid, err := strconv.Atoi(p)
		ts.Check(err)
		if !processGone(pid) {
			ts.Fatalf("process %d (from %s) is still running", pid, args[0])
		}
	}
}

func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if info, err := os.Stat(path); err == nil && info.Size() > 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear within a minute", args[0])
		}
	}
}

func cmdStopwatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: stopwatch")
	}
	ts.Setenv("STOPWATCH", strconv.FormatInt(time.Now().UnixNano(), 10))
}

func cmdElapsed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: elapsed MAX")
	}
	max, err := time.ParseDuration(args[0])
	ts.Check(err)
	start, err := strconv.ParseInt(ts.Getenv("STOPWATCH"), 10, 64)
	if err != nil {
		ts.Fatalf("no stopwatch: run stopwatch first")
	}
	if took := time.Since(time.Unix(0, start)); took >= max {
		ts.Fatalf("took %s, want less than %s", took.Round(time.Millisecond), max)
	}
}
