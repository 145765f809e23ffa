#!/bin/sh
# claude-json.sh: a builder that does fixer.sh's work (with the same
# $FIX_ON) and then prints what `claude -p --output-format json` prints: a
# result object with usage and total_cost_usd. The numbers come from
# $TOKENS_IN (default 600), $TOKENS_OUT (default 400), $CACHE_READ
# (default 0) and $COST (default 0.25), so a test can spend a budget
# exactly.
sh "$(dirname "$0")/fixer.sh" >/dev/null
printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":1200,"num_turns":3,"result":"Done: edited calc.sh.","session_id":"00000000-0000-0000-0000-000000000000","total_cost_usd":%s,"usage":{"input_tokens":%s,"cache_creation_input_tokens":0,"cache_read_input_tokens":%s,"output_tokens":%s}}\n' \
	"${COST:-0.25}" "${TOKENS_IN:-600}" "${CACHE_READ:-0}" "${TOKENS_OUT:-400}"
