#!/bin/sh
# judge-malformed.sh: a judge whose answer holds no parseable verdict: prose
# and a JSON object cut off before its end. It reads and discards its
# prompt. With $CALLS set it appends one line per call to that file, so a
# test can count the attempts.
cat >/dev/null
if [ -n "${CALLS:-}" ]; then
	echo "call ${LOOP_ITERATION:-?}" >>"$CALLS"
fi
echo "Looks good to me overall."
echo '{"verdict": "pass", "evidence": "calc.sh line 3"'
