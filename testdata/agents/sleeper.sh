#!/bin/sh
# sleeper.sh: a builder that records when it runs. It appends
# "start <node> <epoch ns>" to the file $TIMELINE, sleeps $SLEEP seconds
# (default 1), then appends "end <node> <epoch ns>". With $PEERS = N it
# first waits (up to 30 s) until N nodes have started, so nodes that really
# run at once overlap whatever the machine's load.
cat >/dev/null
: "${TIMELINE:?TIMELINE names the timeline file}"
echo "start ${LOOP_NODE:-?} $(date +%s%N)" >>"$TIMELINE"
if [ -n "${PEERS:-}" ]; then
	i=0
	while [ "$(grep -c '^start ' "$TIMELINE")" -lt "$PEERS" ] && [ "$i" -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
fi
sleep "${SLEEP:-1}"
echo "end ${LOOP_NODE:-?} $(date +%s%N)" >>"$TIMELINE"
