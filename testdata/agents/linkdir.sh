#!/bin/sh
# linkdir.sh: a builder that swaps the protected directory pkg/ for a
# symbolic link to a directory outside the loop root ($OUTSIDE), so that
# putting a protected file back under pkg/ would write outside the root.
cat >/dev/null
rm -rf pkg
ln -s "$OUTSIDE" pkg
echo "moved pkg"
