#!/usr/bin/env bash
# Installs loop-action for host mode (host/action.yml) and prints bin=PATH to
# $GITHUB_OUTPUT. LOOP_INSTALL says how:
#   release  download loop-action_<os>_<arch>.tar.gz of release LOOP_VERSION
#            from $GITHUB_SERVER_URL/$LOOP_REPOSITORY and verify it against the
#            release's checksums.txt; any failure stops the job
#   source   build ./cmd/loop-action from this action's own checkout
#   auto     release, and source only when the release has no such asset
#            (HTTP 404: a branch or a commit, not a released tag); a checksum
#            that does not match is never a reason to fall back
# A source build is two calls. The first prints, instead of bin=, source=true,
# dir= (where the binary goes), key= (a cache key: the OS, the architecture and
# a hash of the action's files - the runner tells a step the ref the action
# was used at, never the commit that ref resolved to, and its copy of the
# action has no .git),
# go-mod= (the action's go.mod, for actions/setup-go) and go=true when go is on
# PATH. The action then restores dir from the cache, sets up Go when there is
# none, and calls this again with LOOP_INSTALL=build, which builds unless
# LOOP_CACHE_HIT is true and the binary is there, and prints bin=.
# Runs under bash on Linux, macOS and Windows (Git Bash) runners.
set -euo pipefail

die() { echo "::error title=loop-action install::$*" >&2; exit 1; }

case "${RUNNER_OS:-}" in
Linux) os=linux ;;
macOS) os=darwin ;;
Windows) os=windows ;;
*) die "unsupported runner OS '${RUNNER_OS:-}'" ;;
esac
case "${RUNNER_ARCH:-}" in
X64) arch=amd64 ;;
ARM64) arch=arm64 ;;
*) die "unsupported runner architecture '${RUNNER_ARCH:-}'" ;;
esac
exe=loop-action
[ "$os" = windows ] && exe=loop-action.exe

temp="${RUNNER_TEMP:?RUNNER_TEMP is not set}"
if [ "$os" = windows ] && command -v cygpath >/dev/null; then temp=$(cygpath -u "$temp"); fi
dir="$temp/loop-action-bin"
[ "${LOOP_INSTALL:-}" = build ] || { rm -rf "$dir" && mkdir -p "$dir"; }

sha256() {
	if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1
}

# fetch URL FILE: 0 when downloaded, 4 when the server answered 404, else 1.
fetch() {
	local code
	code=$(curl -sSL --retry 3 --retry-connrefused -o "$2" -w '%{http_code}' "$1") || return 1
	case "$code" in
	200) return 0 ;;
	404) return 4 ;;
	*) echo "GET $1: HTTP $code" >&2; return 1 ;;
	esac
}

release() {
	[ -n "${LOOP_VERSION:-}" ] || { echo "no version to download (uses: ...@REF, or the version input)" >&2; return 4; }
	local asset="loop-action_${os}_${arch}.tar.gz"
	local base="${GITHUB_SERVER_URL:-https://github.com}/${LOOP_REPOSITORY:?LOOP_REPOSITORY is not set}/releases/download/${LOOP_VERSION}"
	local rc=0
	fetch "$base/$asset" "$dir/$asset" || rc=$?
	[ "$rc" = 0 ] || return "$rc"
	fetch "$base/checksums.txt" "$dir/checksums.txt" || die "release $LOOP_VERSION has $asset but no checksums.txt"
	local want got
	want=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$dir/checksums.txt")
	got=$(sha256 "$dir/$asset")
	[ -n "$want" ] || die "checksums.txt of release $LOOP_VERSION does not list $asset"
	[ "$want" = "$got" ] || die "checksum mismatch for $asset of release $LOOP_VERSION: want $want, got $got"
	tar -xzf "$dir/$asset" -C "$dir" "$exe" || die "$asset holds no $exe"
	rm -f "$dir/$asset" "$dir/checksums.txt"
	echo "installed loop-action $LOOP_VERSION ($os/$arch) from its release, checksum verified"
}

src="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}/.."

# source_key is the cache key of a binary built from src: the OS, the
# architecture and a hash of every file of the action's source (what the
# binary embeds, such as init's templates, included).
source_key() {
	local hash=(sha256sum)
	command -v sha256sum >/dev/null || hash=(shasum -a 256)
	local sum
	sum=$(cd "$src" && find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 "${hash[@]}" | "${hash[@]}" | cut -d' ' -f1)
	echo "loop-action-$os-$arch-$sum"
}

# needs_source prints what the action needs to restore or build the binary.
needs_source() {
	local go=false
	command -v go >/dev/null && go=true
	{
		echo "source=true"
		if [ "$os" = windows ]; then echo "dir=$(cygpath -w "$dir")"; else echo "dir=$dir"; fi
		echo "key=$(source_key)"
		echo "go-mod=$src/go.mod"
		echo "go=$go"
	} >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
	echo "loop-action is built from this action's source (${LOOP_VERSION:-no ref}), or taken from the cache of an earlier build of it"
	exit 0
}

source_build() {
	if [ "${LOOP_CACHE_HIT:-}" = true ] && [ -x "$dir/$exe" ]; then
		echo "restored loop-action built from this action's source from the cache"
		return
	fi
	command -v go >/dev/null || die "install: source needs go on the runner (actions/setup-go, go 1.21 or newer)"
	(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$dir/$exe" ./cmd/loop-action) || die "building loop-action from source failed"
	echo "built loop-action from this action's source (${LOOP_VERSION:-no ref})"
}

case "${LOOP_INSTALL:-auto}" in
release)
	rc=0; release || rc=$?
	[ "$rc" = 0 ] || die "no release asset loop-action_${os}_${arch}.tar.gz for '${LOOP_VERSION:-}' (install: source builds it instead)"
	;;
source) needs_source ;;
build) source_build ;;
auto)
	rc=0; release || rc=$?
	case "$rc" in
	0) ;;
	4) echo "no release for '${LOOP_VERSION:-}': building from source"; needs_source ;;
	*) die "downloading release ${LOOP_VERSION:-} failed" ;;
	esac
	;;
*) die "install must be release, source or auto, not '${LOOP_INSTALL}'" ;;
esac

"$dir/$exe" version
echo "bin=$dir/$exe" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
