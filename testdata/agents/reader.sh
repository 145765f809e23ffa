#!/bin/sh
# reader.sh: the smallest real agent. It reads its prompt and exits,
# changing nothing: what the runner spends around it is orchestration.
cat >/dev/null
