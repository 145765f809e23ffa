package export

import "strings"

// runSh runs the bundled loop with POSIX sh. It uses shell builtins only,
// so it can say that loop-action is missing even when PATH is empty, and it
// does not change directory: the loop runs in ROOT through -C, with the
// bundled loop.toml named by its absolute path.
const runSh = `#!/bin/sh
# Runs the loop bundled with this success export (loop.toml, beside this
# script) on a repository, with loop-action.
#
# Usage: ./run.sh [ROOT] [loop-action run flags...]
#   ROOT  the loop root to run in: the repository (default: the current
#         directory). Paths in loop.toml are relative to it.
# Exits 127 when loop-action is not on PATH, 2 when ROOT is not a
# directory, and otherwise with loop-action's exit code.
set -eu
unset CDPATH

root=.
if [ "$#" -gt 0 ]; then
	case $1 in
	-*) ;;
	*)
		root=$1
		shift
		;;
	esac
fi
if [ ! -d "$root" ]; then
	printf 'run.sh: the loop root %s is not a directory\n' "$root" >&2
	exit 2
fi
root=$(cd -- "$root" && pwd -P)

case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
here=$(cd -- "${here:-/}" && pwd -P)

if ! command -v loop-action >/dev/null 2>&1; then
	echo "run.sh: loop-action is not on PATH: install it (go install github.com/loop-action/loop-action/cmd/loop-action@latest) and try again" >&2
	exit 127
fi
exec loop-action -C "$root" --config "$here/loop.toml" run "$@"
`

// runCmd is run.sh for Windows cmd.exe, with CRLF line endings. It sets
// its exit code with "cmd /c exit N" and leaves through the one "exit /b"
// on its last line.
var runCmd = strings.ReplaceAll(`@echo off
rem Runs the loop bundled with this success export (loop.toml, beside this
rem script) on a repository, with loop-action.
rem
rem Usage: run.cmd [ROOT] [loop-action run flags...]
rem   ROOT  the loop root to run in: the repository (default: the current
rem         directory). Paths in loop.toml are relative to it.
rem Exits 127 when loop-action.exe is not on PATH, 2 when ROOT is not a
rem directory, and otherwise with loop-action's exit code.
setlocal
set "HERE=%~dp0"
set "ROOT=%CD%"
set "FIRST=%~1"
if not defined FIRST goto root_set
if "%FIRST:~0,1%"=="-" goto root_set
for %%I in ("%~1") do set "ROOT=%%~fI"
shift
:root_set
if "%ROOT:~-1%"=="\" set "ROOT=%ROOT%."
if exist "%ROOT%\*" goto root_ok
echo run.cmd: the loop root "%ROOT%" is not a directory 1>&2
cmd /c exit 2
goto end
:root_ok
set "LOOP_ACTION="
for %%I in (loop-action.exe) do set "LOOP_ACTION=%%~$PATH:I"
if defined LOOP_ACTION goto found
echo run.cmd: loop-action.exe is not on PATH: install it (go install github.com/loop-action/loop-action/cmd/loop-action@latest) and try again 1>&2
cmd /c exit 127
goto end
:found
set ARGS=
:collect
if "%~1"=="" goto run
set ARGS=%ARGS% %1
shift
goto collect
:run
"%LOOP_ACTION%" -C "%ROOT%" --config "%HERE%loop.toml" run %ARGS%
:end
exit /b %ERRORLEVEL%
`, "\n", "\r\n")
