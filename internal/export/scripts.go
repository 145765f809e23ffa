package export

import (
	_ "embed"
	"strings"
)

// runSh runs the bundled loop with POSIX sh. It uses shell builtins only,
// so it can say that loop-action is missing even when PATH is empty, and it
// does not change directory: the loop runs in ROOT through -C, with the
// bundled loop.toml named by its absolute path.
//
//go:embed scripts/run.sh
var runSh string

// runCmd is run.sh for Windows cmd.exe, with CRLF line endings. It sets
// its exit code with "cmd /c exit N" and leaves through the one "exit /b"
// on its last line.
var runCmd = strings.ReplaceAll(runCmdLF, "\n", "\r\n")

//go:embed scripts/run.cmd
var runCmdLF string
