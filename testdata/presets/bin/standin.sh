#!/bin/sh
# standin.sh NAME RECORDING ARGS...: what every stand-in in this directory
# does (see ../README.md). The prompt comes on stdin unless ARGS name a
# --message-file, whose path is recorded as <prompt file>. $PRESET_OUTPUT,
# when set, names another recording to print.
name=$1 rec=${PRESET_OUTPUT:-$2}
shift 2
: "${PRESET_LOG:?}" "${PRESET_RECORDINGS:?}"
mkdir -p "$PRESET_LOG"
: >"$PRESET_LOG/$name.argv"
prompt_file=
while [ $# -gt 0 ]; do
	printf '%s\n' "$1" >>"$PRESET_LOG/$name.argv"
	if [ "$1" = --message-file ] && [ $# -gt 1 ]; then
		prompt_file=$2
		echo '<prompt file>' >>"$PRESET_LOG/$name.argv"
		shift
	fi
	shift
done
if [ -n "$prompt_file" ]; then
	cat "$prompt_file" >"$PRESET_LOG/$name.prompt"
else
	cat >"$PRESET_LOG/$name.prompt"
fi
echo "fixed by $name" >fixed.txt
cat "$PRESET_RECORDINGS/$rec"
