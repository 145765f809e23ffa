#!/bin/sh
# spender.sh: a builder that spends. It appends "start <node> <epoch ns>"
# to $TIMELINE, sleeps $SLEEP seconds (default 0.1), appends
# "end <node> <epoch ns> <cost>", then prints what `claude -p
# --output-format json` prints, reporting $COST dollars (default 0.10).
# The timeline lets a test or a benchmark see which nodes were running
# when a cost budget ran out.
cat >/dev/null
: "${TIMELINE:?TIMELINE names the timeline file}"
echo "start ${LOOP_NODE:-?} $(date +%s%N)" >>"$TIMELINE"
sleep "${SLEEP:-0.1}"
echo "end ${LOOP_NODE:-?} $(date +%s%N) ${COST:-0.10}" >>"$TIMELINE"
printf '{"type":"result","subtype":"success","is_error":false,"result":"spent","total_cost_usd":%s,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10}}\n' "${COST:-0.10}"
