#!/bin/sh
# judge-no-evidence.sh: a judge that rules pass without any evidence,
# which the gate counts as a fail. It reads and discards its prompt.
cat >/dev/null
echo "I checked it."
echo '{"verdict":"pass"}'
