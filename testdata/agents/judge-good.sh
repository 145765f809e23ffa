#!/bin/sh
# judge-good.sh: a judge that rules pass with evidence and a score of 9,
# in a fenced json block after some prose. It reads and discards its prompt.
cat >/dev/null
echo "I read calc.sh and ran test.sh."
echo '```json'
echo '{"verdict":"pass","reason":"add is correct","evidence":"calc.sh:3 computes $1 + $2; test.sh reports ok for all three cases","score":9}'
echo '```'
