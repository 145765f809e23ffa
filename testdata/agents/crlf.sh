#!/bin/sh
# crlf.sh: a scripted builder for the quickstart project (calc.sh with a
# seeded bug, test.sh). It fixes calc.sh with LF line endings and adds a
# .gitattributes that makes every checkout write calc.sh with CRLF: the
# checks pass on the LF file, while a clone of the commit has
# "add() {\r", which sh cannot run. With $ATTRS set, that is the
# .gitattributes line instead (an ident line, say), and with $HEADER set
# calc.sh starts with that line (a "# $Id$", say).
cat >/dev/null
printf '%s\n' "${ATTRS:-calc.sh text eol=crlf}" >.gitattributes
if [ -n "${HEADER:-}" ]; then printf '%s\n' "$HEADER" >calc.sh; else : >calc.sh; fi
cat >>calc.sh <<'CALC'
# calc.sh: the arithmetic under test.
add() {
	echo $(($1 + $2))
}
CALC
echo "fixed calc.sh, and added .gitattributes"
