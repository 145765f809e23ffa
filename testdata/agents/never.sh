#!/bin/sh
# never.sh: a builder that never converges. It reads its prompt and appends
# a line to scratch.txt, a file no check looks at, so the workspace changes
# but no verdict ever does. With $PROMPT_LOG set it appends the prompt to
# that file.
prompt=$(cat)
if [ -n "${PROMPT_LOG:-}" ]; then
	printf '%s\n' "$prompt" >>"$PROMPT_LOG"
fi
echo "attempt ${LOOP_ITERATION:-?} by ${LOOP_NODE:-?}" >>scratch.txt
echo "tried something unrelated"
