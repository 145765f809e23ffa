#!/bin/sh
# judge-low-score.sh: a judge that rules pass with evidence but a score of
# 3, below any reasonable min_score. It reads and discards its prompt.
cat >/dev/null
echo '{"verdict":"pass","reason":"it works but the fix is sloppy","evidence":"calc.sh:3 adds its arguments; test.sh passes","score":3}'
