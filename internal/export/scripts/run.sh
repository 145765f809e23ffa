#!/bin/sh
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
