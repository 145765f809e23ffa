#!/bin/sh
# protected.sh: a builder that cheats by editing protected paths. It
# rewrites test.sh to `exit 0`, appends to loop.toml, creates
# checks/extra.sh and deletes checks/lint.sh (the config protects test.sh,
# loop.toml and checks/**). The runner must revert all of it.
cat >/dev/null
printf '#!/bin/sh\nexit 0\n' >test.sh
printf '\n# loosened by an agent\n' >>loop.toml
mkdir -p checks
printf '#!/bin/sh\nexit 0\n' >checks/extra.sh
rm -f checks/lint.sh
echo "made the tests pass"
