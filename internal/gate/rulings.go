package gate

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

// commandRuling rules on a command check:
// pass = the command exited with expect_exit.
func commandRuling(r CommandResult, ok bool, ch loop.Check) (Status, string) {
	if !ok {
		return Fail, "no evidence: the command was not run"
	}
	line := CommandLine(r, ch.ExpectExit, ch.Timeout.Duration)
	if r.exited(ch.ExpectExit) {
		return Pass, line
	}
	return Fail, line
}

// CommandLine is the evidence line of a command's run, for example
// "`go test ./...` exited 1 (expected 0) after 4.2s: --- FAIL: TestParse (0.00s)".
func CommandLine(r CommandResult, expect int, limit time.Duration) string {
	cmd := "`" + phrase.Line(r.Command, 80) + "`"
	var head string
	switch {
	case r.StartErr != "":
		return fmt.Sprintf("%s could not start: %s", cmd, r.StartErr)
	case r.TimedOut:
		head = fmt.Sprintf("%s timed out after %s (timeout %s); its process group was killed", cmd, phrase.Duration(r.Duration), limit)
	case r.Stopped != "":
		head = fmt.Sprintf("%s was stopped after %s: %s", cmd, phrase.Duration(r.Duration), r.Stopped)
	case r.Signal != "":
		head = fmt.Sprintf("%s was killed by signal %s after %s", cmd, r.Signal, phrase.Duration(r.Duration))
	case r.ExitCode == expect:
		head = fmt.Sprintf("%s exited %d after %s", cmd, r.ExitCode, phrase.Duration(r.Duration))
	default:
		head = fmt.Sprintf("%s exited %d (expected %d) after %s", cmd, r.ExitCode, expect, phrase.Duration(r.Duration))
	}
	if r.OutputBytes >= 1<<20 {
		head += fmt.Sprintf(", %s of output", phrase.Bytes(r.OutputBytes))
	}
	if r.exited(expect) {
		return head
	}
	if ex := Excerpt(r.Tail); ex != "" {
		head += ": " + ex
	}
	return head
}

var (
	failLineRE = regexp.MustCompile(`(?i)(\bfail|\berror|\bpanic|\bfatal|\bexception\b|\btraceback\b|\bassert)`)
	ansiRE     = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]")
)

// Excerpt picks the most telling line of a command's output: the first
// line that reports a failure, else the last non-empty line.
func Excerpt(tail string) string {
	var last string
	for line := range strings.Lines(tail) {
		line = strings.TrimSpace(ansiRE.ReplaceAllString(line, ""))
		if line == "" {
			continue
		}
		if failLineRE.MatchString(line) {
			return phrase.Line(line, 200)
		}
		last = line
	}
	return phrase.Line(last, 200)
}

// fileProblem says why a path cannot be used, or "".
func fileProblem(r FileResult) string {
	switch {
	case r.Escapes != "":
		if r.Escapes == r.Path {
			return fmt.Sprintf("`%s` leads outside the loop root; it is not read", r.Path)
		}
		return fmt.Sprintf("`%s` leads outside the loop root (symlink to %s); it is not read", r.Path, r.Escapes)
	case r.Err != "":
		return fmt.Sprintf("`%s` could not be read: %s", r.Path, r.Err)
	case !r.Exists:
		return fmt.Sprintf("`%s` does not exist", r.Path)
	}
	return ""
}

func fileRuling(r FileResult, ok bool, ch loop.Check) (Status, string) {
	if !ok {
		return Fail, fmt.Sprintf("no evidence: `%s` was not looked at", ch.Path)
	}
	if p := fileProblem(r); p != "" {
		return Fail, p
	}
	switch {
	case r.Dir && ch.NonEmpty && r.Entries == 0:
		return Fail, fmt.Sprintf("`%s` is an empty directory (non_empty = true)", r.Path)
	case r.Dir:
		return Pass, fmt.Sprintf("`%s` exists (directory, %s)", r.Path, phrase.Plural(r.Entries, "entry", "entries"))
	case ch.NonEmpty && r.Size == 0:
		return Fail, fmt.Sprintf("`%s` exists but is empty (non_empty = true)", r.Path)
	}
	return Pass, fmt.Sprintf("`%s` exists (%s)", r.Path, phrase.Bytes(r.Size))
}

func regexRuling(r FileResult, ok bool, ch loop.Check) (Status, string) {
	if !ok {
		return Fail, fmt.Sprintf("no evidence: `%s` was not read", ch.Path)
	}
	if p := fileProblem(r); p != "" {
		return Fail, p
	}
	switch {
	case r.Dir:
		return Fail, fmt.Sprintf("`%s` is a directory, not a file", r.Path)
	case r.TooLarge:
		return Fail, fmt.Sprintf("`%s` is %s, more than the %s a regex check reads", r.Path, phrase.Bytes(r.Size), phrase.Bytes(r.ReadLimit))
	}
	re, err := regexp.Compile("(?m)" + ch.Pattern)
	if err != nil {
		return Fail, fmt.Sprintf("pattern /%s/ does not compile: %v", ch.Pattern, err)
	}
	loc := re.FindIndex(r.Content)
	if loc == nil {
		return Fail, fmt.Sprintf("`%s` has no match for /%s/", r.Path, ch.Pattern)
	}
	before := r.Content[:loc[0]]
	start := bytes.LastIndexByte(before, '\n') + 1
	end := len(r.Content)
	if i := bytes.IndexByte(r.Content[loc[0]:], '\n'); i >= 0 {
		end = loc[0] + i
	}
	line := 1 + bytes.Count(before, []byte("\n"))
	return Pass, fmt.Sprintf("`%s` matches /%s/ at line %d: %s", r.Path, ch.Pattern, line, phrase.Line(string(r.Content[start:end]), 120))
}
