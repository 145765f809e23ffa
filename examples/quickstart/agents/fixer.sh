#!/bin/sh
# agents/fixer.sh: a scripted agent standing in for an agent CLI. It reads
# its prompt on stdin, fixes the seeded bug in calc.sh and writes the
# summary the loop asks for. A real agent would decide what to change; this
# one knows.
cat >/dev/null
sed 's/\$1 - \$2/$1 + $2/' calc.sh >calc.sh.tmp && mv calc.sh.tmp calc.sh
mkdir -p out
cat >out/summary.md <<'SUMMARY'
# Fix: add subtracted instead of adding

`add` in calc.sh computed `$1 - $2`; it now computes `$1 + $2`, and test.sh passes.
SUMMARY
echo "fixed calc.sh and wrote out/summary.md"
