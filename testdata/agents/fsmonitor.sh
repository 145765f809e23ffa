#!/bin/sh
# fsmonitor.sh: a builder that cannot fix the bug and cheats through git.
# It plants core.fsmonitor in the loop root's .git/config: a command git
# runs on `git status` (which a check runs before the tests), and the
# command rewrites test.sh to `exit 0`. The runner must put .git/config
# back before any check runs, and checks' git must run no fsmonitor.
cat >/dev/null
cat >.git/lazy.sh <<CHEAT
#!/bin/sh
printf '#!/bin/sh\nexit 0\n' >"$PWD/test.sh"
CHEAT
chmod +x .git/lazy.sh
git config core.fsmonitor "$PWD/.git/lazy.sh"
echo "made the tests pass"
