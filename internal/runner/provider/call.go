package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loop-action/loop-action/internal/process"
)

// maxDetail bounds the line of agent output quoted in an error.
const maxDetail = 240

// failure says why a call failed, or returns nil when it did not. The detail
// it quotes is what the agent reported as its error, else the last line of
// its output.
func (c Command) failure(ctx context.Context, res process.Result, rep report) error {
	took := roundDuration(res.Duration)
	detail := cmp.Or(rep.Failure, lastLine(res.Tail))
	switch {
	case res.Canceled && res.StartErr != nil:
		return fmt.Errorf("agent %q not started: %w", c.Name, causeOf(ctx))
	case res.Canceled:
		return fmt.Errorf("agent %q cancelled after %s: %w", c.Name, took, causeOf(ctx))
	case res.TimedOut:
		return fmt.Errorf("agent %q timed out after %s%s", c.Name, roundDuration(c.timeout()), suffix(detail))
	case res.StartErr != nil:
		return fmt.Errorf("agent %q could not start: %w", c.Name, res.StartErr)
	case res.WaitErr != nil:
		return fmt.Errorf("agent %q: %w", c.Name, res.WaitErr)
	case res.SweepErr != nil:
		return fmt.Errorf("agent %q left processes that could not be killed: %w", c.Name, res.SweepErr)
	case res.Signal != "":
		return fmt.Errorf("agent %q was killed by a signal (%s) after %s%s", c.Name, res.Signal, took, suffix(detail))
	case res.ExitCode != 0:
		return fmt.Errorf("agent %q exited %d after %s%s", c.Name, res.ExitCode, took, suffix(detail))
	case rep.Failure != "":
		return fmt.Errorf("agent %q reported an error after %s: %s", c.Name, took, rep.Failure)
	}
	return nil
}

// causeOf is why ctx is done; context.Canceled if, oddly, it is not.
func causeOf(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return context.Canceled
}

// suffix renders an optional detail after an error message.
func suffix(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}

// roundDuration rounds d for people: 300ms, 3.2s, 1m5s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// lastLine is the last line of out that has a letter or a digit (a line
// of only "}" or ")" says nothing; the last non-blank line when none has),
// without control characters, cut to maxDetail bytes.
func lastLine(out []byte) string {
	text := strings.ToValidUTF8(string(out), "\uFFFD")
	line := ""
	for rest := strings.TrimRightFunc(text, unicode.IsSpace); rest != ""; {
		i := strings.LastIndexByte(rest, '\n')
		if line == "" || strings.IndexFunc(rest[i+1:], isAlnum) >= 0 {
			line = rest[i+1:]
		}
		if i < 0 || strings.IndexFunc(line, isAlnum) >= 0 {
			break
		}
		rest = strings.TrimRightFunc(rest[:i], unicode.IsSpace)
	}
	return oneLine(line)
}

// ansi matches terminal escape sequences: CSI (colours, cursor moves) and
// OSC (titles, links), and any other escape with the character after it.
var ansi = regexp.MustCompile("\x1b(\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)?|[@-_])")

// oneLine is line without terminal escape sequences, control characters
// and surrounding space, cut to maxDetail bytes.
func oneLine(line string) string {
	text := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, ansi.ReplaceAllString(line, ""))
	text = strings.TrimSpace(text)
	if len(text) <= maxDetail {
		return text
	}
	cut := maxDetail
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// writePromptFile writes prompt to a new file (mode 0600) in dir and returns
// its absolute path, so that it names the file from the agent's working
// directory too.
func writePromptFile(dir, prompt string) (string, error) {
	dir, err := absDir(dir)
	if err != nil {
		return "", fmt.Errorf("write prompt file: %w", err)
	}
	f, err := os.CreateTemp(dir, "prompt-*.txt")
	if err != nil {
		return "", fmt.Errorf("write prompt file: %w", err)
	}
	_, werr := f.WriteString(prompt)
	if err := errors.Join(werr, f.Close()); err != nil {
		removeQuietly(f.Name())
		return "", fmt.Errorf("write prompt file %q: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// absDir is dir as an absolute path; "" (the system's temporary
// directory) stays "".
func absDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%q: %w", dir, err)
	}
	return abs, nil
}

// removeQuietly removes a file of ours; the caller removes the whole
// directory later, so a failure here changes nothing.
func removeQuietly(path string) {
	_ = os.Remove(path)
}

// privateTemp gives one call its temporary directory, in dir (the
// system's temporary directory when ""), as an absolute path: the agent's
// TMPDIR, so that what it leaves there is removed after the call. It is a
// directory no running call has: one that an earlier call left empty
// (releaseTemp), else a new one. A directory is reused rather than
// made and removed for every call because on ext4 mounted with discard,
// as CI machines often are, a mkdir and rmdir cost ~0.4 ms each, while
// the checks cost ~1 ms (docs/performance.md).
func privateTemp(dir string) (string, error) {
	dir, err := absDir(dir)
	if err != nil {
		return "", fmt.Errorf("make the agent's TMPDIR: %w", err)
	}
	for tmp := temps.take(dir); tmp != ""; tmp = temps.take(dir) {
		if emptied(tmp) { // still there, and nothing was put there meanwhile
			return tmp, nil
		}
	}
	tmp, err := os.MkdirTemp(dir, "agent-*")
	if err != nil {
		return "", fmt.Errorf("make the agent's TMPDIR: %w", err)
	}
	return tmp, nil
}

// releaseTemp ends a call's use of its temporary directory: it
// removes what the agent left there and keeps the directory for a later
// call, or removes it when it is not as privateTemp made it (a symbolic
// link, another mode or owner) or cannot be emptied. The caller removes
// the run's scratch area later, so a failure here changes nothing.
func releaseTemp(tmp string) {
	if emptied(tmp) {
		temps.put(tmp)
		return
	}
	_ = os.RemoveAll(tmp)
}

// emptied reports whether tmp is still the directory privateTemp made
// (mode 0700, not a symbolic link) and, looked at through an os.Root so
// that nothing the agent left is followed, holds nothing any more.
func emptied(tmp string) bool {
	info, err := os.Lstat(tmp)
	if err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
		return false
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return false
	}
	defer root.Close()
	if now, err := root.Stat("."); err != nil || !os.SameFile(info, now) {
		return false // replaced after the Lstat
	}
	d, err := root.Open(".")
	if err != nil {
		return false
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		err = errors.Join(err, root.RemoveAll(name))
	}
	return err == nil
}

// temps are the emptied temporary directories of calls that ended, by the
// directory they are in.
var temps = tempPool{free: map[string][]string{}}

type tempPool struct {
	mu   sync.Mutex
	free map[string][]string
}

// take returns an emptied directory in dir, "" when there is none.
func (p *tempPool) take(dir string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	free := p.free[dir]
	if len(free) == 0 {
		return ""
	}
	p.free[dir] = free[:len(free)-1]
	return free[len(free)-1]
}

// put keeps tmp for a later call in the same directory.
func (p *tempPool) put(tmp string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	dir := filepath.Dir(tmp)
	p.free[dir] = append(p.free[dir], tmp)
}
