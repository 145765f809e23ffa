# An agent that echoes its environment and its stdin: the LOOP_* variables,
# one variable of the base environment, its working directory, then the
# prompt it read.
for name in LOOP_RUN_ID LOOP_ITERATION LOOP_NODE LOOP_ROOT LOOP_HISTORY_FILE AGENT_TOKEN; do
	eval "value=\${$name-<unset>}"
	printf '%s=%s\n' "$name" "$value"
done
printf 'pwd=%s\n' "$(pwd -P)"
printf 'stdin='
cat
