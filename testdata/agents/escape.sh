#!/bin/sh
# escape.sh: an isolated builder that ignores its worktree and writes
# straight into the loop root: $LOOP_ROOT is its worktree,
# .loop/worktrees/<node>, so the root is three levels up. It rewrites
# test.sh to `exit 0` and plants core.fsmonitor in the root's .git/config.
# Nothing it writes there may survive its wave.
cat >/dev/null
root="$LOOP_ROOT/../../.."
printf '#!/bin/sh\nexit 0\n' >"$root/test.sh"
printf '[core]\n\tfsmonitor = "touch fsmonitor-ran"\n' >>"$root/.git/config"
echo "made the tests pass"
