#!/bin/sh
# nap.sh: an agent that reads its prompt, then sleeps 1 s in a real sleep
# process and exits, changing nothing: a node that takes a known time.
cat >/dev/null
exec sleep 1
