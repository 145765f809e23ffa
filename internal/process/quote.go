package process

import (
	"runtime"
	"strings"
)

// ShellArgv returns the argv that runs script with the POSIX shell:
// []string{"/bin/sh", "-c", script}, or on Windows, which has no /bin,
// the sh found on PATH. Run never adds a shell by itself; callers that
// want shell syntax (pipes, redirections, globbing) ask for it with this.
// The shell is named by its path, so that starting it looks nothing up:
// a lookup on PATH stats every directory before the shell's (a dozen on a
// CI runner), for every check of every iteration, and would run whichever
// sh comes first there.
func ShellArgv(script string) []string {
	return []string{shell, "-c", script}
}

// shell is the POSIX shell ShellArgv runs.
var shell = map[bool]string{true: "sh", false: "/bin/sh"}[runtime.GOOS == "windows"]

// Quote renders argv as a POSIX-shell command line, for display (logs, error
// messages). Words made only of characters in [A-Za-z0-9_./:=@%+,-] are left
// bare; every other word, including the empty word, is single-quoted, each
// embedded single quote becoming close-quote, backslash-quote, open-quote:
//
//	Quote([]string{"echo", "it's $HOME"}) == `echo 'it'\''s $HOME'`
//
// Pasting the result into sh reproduces argv.
func Quote(argv []string) string {
	var b strings.Builder
	for i, word := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteWord(word))
	}
	return b.String()
}

// quoteWord quotes a single word as described in Quote.
func quoteWord(word string) string {
	if word != "" && strings.IndexFunc(word, needsQuoting) < 0 {
		return word
	}
	return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
}

// needsQuoting reports whether r is outside the set of characters that are
// safe unquoted in a shell word.
func needsQuoting(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	default:
		return !strings.ContainsRune("_./:=@%+,-", r)
	}
}
