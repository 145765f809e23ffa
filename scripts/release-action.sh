#!/usr/bin/env bash
# scripts/release-action.sh TAG IMAGE [FILE]: points the action at its
# prebuilt image for a release. It rewrites FILE (default action.yml) so
# that runs.image is docker://IMAGE:TAG instead of the Dockerfile, and
# changes nothing else; main keeps `image: Dockerfile` so that the self-test
# exercises the working tree. release.yml commits the result on the release
# tag only. Tested by cmd/loop-action/release_test.go.
set -euo pipefail
tag=${1:?usage: release-action.sh TAG IMAGE [FILE]}
image=${2:?usage: release-action.sh TAG IMAGE [FILE]}
file=${3:-action.yml}
case "$tag" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "release-action.sh: $tag is not a release tag (vX.Y.Z)" >&2; exit 2 ;;
esac
case "$image" in
*[!a-z0-9./_:-]* | "") echo "release-action.sh: bad image name '$image'" >&2; exit 2 ;;
esac
[ "$(grep -c '^  image: Dockerfile$' "$file")" = 1 ] || { echo "release-action.sh: $file has no single 'image: Dockerfile' line" >&2; exit 1; }
tmp=$(mktemp "$file.XXXXXX")
sed "s|^  image: Dockerfile\$|  image: docker://$image:$tag|" "$file" >"$tmp"
mv "$tmp" "$file"
