#!/bin/sh
# hang.sh: a builder that never finishes. It starts a background child
# that sleeps 600 s, writes its own pid and the child's to hang.pids (so a
# test can prove the whole process group was killed), then sleeps 600 s.
cat >/dev/null
sleep 600 &
echo "$! $$" >hang.pids
sleep 600
