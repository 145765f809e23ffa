#!/bin/sh
# fixer.sh: a scripted builder for the quickstart project (calc.sh with a
# seeded bug, test.sh). It fixes the bug on its Nth attempt, N = $FIX_ON
# (default 1): when LOOP_ITERATION >= N it rewrites calc.sh correctly and
# writes out/summary.md, as examples/quickstart/agents/fixer.sh does;
# before that it makes a wrong edit (add multiplies), so test.sh still fails.
#
# It reads its prompt on stdin. With $PROMPT_LOG set it appends the prompt
# to that file (keep it outside the loop root, or the workspace changes).
prompt=$(cat)
if [ -n "${PROMPT_LOG:-}" ]; then
	printf '%s\n' "$prompt" >>"$PROMPT_LOG"
fi
if [ "${LOOP_ITERATION:-0}" -ge "${FIX_ON:-1}" ]; then
	cat >calc.sh <<'CALC'
# calc.sh: the arithmetic under test. add has a seeded bug.
add() {
	echo $(($1 + $2))
}
CALC
	mkdir -p out
	cat >out/summary.md <<'SUMMARY'
# Fix: add subtracted instead of adding

`add` in calc.sh computed `$1 - $2`; it now computes `$1 + $2`, and test.sh passes.
SUMMARY
	echo "fixed calc.sh and wrote out/summary.md (attempt $LOOP_ITERATION)"
else
	cat >calc.sh <<'CALC'
# calc.sh: the arithmetic under test. add has a seeded bug.
add() {
	echo $(($1 * $2))
}
CALC
	echo "changed calc.sh (attempt $LOOP_ITERATION; wrong until attempt ${FIX_ON:-1})"
fi
