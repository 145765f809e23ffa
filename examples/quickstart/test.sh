#!/bin/sh
# test.sh: the quickstart's test suite.
. ./calc.sh
fail=0
check() {
	if [ "$2" != "$3" ]; then
		echo "--- FAIL: $1: got $2, want $3"
		fail=1
	else
		echo "ok: $1"
	fi
}
check "add 2 3" "$(add 2 3)" 5
check "add 0 0" "$(add 0 0)" 0
check "add -1 1" "$(add -1 1)" 0
exit $fail
