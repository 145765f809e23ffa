package process

import (
	"strconv"
	"strings"
	"testing"
)

// TestChildStdioBlocking: the child's stdin, stdout and stderr are plain
// blocking descriptors — a child that writes faster than Run drains must
// block, not fail with EAGAIN — whether its stdin is the null device, a
// pipe Run feeds, or neither.
func TestChildStdioBlocking(t *testing.T) {
	t.Parallel()
	const oNonblock = 0o4000
	script := "for fd in 0 1 2; do grep '^flags:' /proc/self/fdinfo/$fd; done"
	for name, spec := range map[string]Spec{
		"null stdin": {Argv: ShellArgv(script)},
		"fed stdin":  {Argv: ShellArgv(script), Stdin: strings.NewReader("")},
	} {
		res := runTimed(t, spec)
		lines := strings.Fields(string(res.Stdout))
		if !res.OK() || len(lines) != 6 {
			t.Fatalf("%s: %+v", name, res)
		}
		for fd := range 3 {
			flags, err := strconv.ParseUint(lines[2*fd+1], 8, 64)
			if err != nil || flags&oNonblock != 0 {
				t.Errorf("%s: fd %d has flags %s (%v), want O_NONBLOCK clear", name, fd, lines[2*fd+1], err)
			}
		}
	}
}
