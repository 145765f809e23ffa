#!/bin/sh
# flood.sh: a builder that prints 10 MB (10485760 bytes, in short lines)
# to stdout, a little to stderr, and succeeds. A runner that does not drain
# its agents' output concurrently, or keeps all of it, hangs or bloats.
cat >/dev/null
yes 'flood flood flood flood flood flood flood flood flood flood ab' | head -c 10485760
echo "flooded" >&2
exit 0
