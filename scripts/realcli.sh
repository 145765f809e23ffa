#!/bin/sh
# scripts/realcli.sh: the real-CLI suite. It installs the agent CLIs the
# presets drive (Claude Code, Codex, Gemini CLI, opencode) at the versions
# pinned in scripts/realcli/package-lock.json into a cache directory of its
# own, and runs the tests of cmd/loop-action named TestRealCLI* on them,
# against a scripted model server on 127.0.0.1.
#
# The tests run in a network namespace of their own that has only a
# loopback interface, so that nothing but the model server can be reached,
# and in a mount namespace where everything but a fresh /tmp is read-only,
# so that a CLI writing outside its root, HOME or TMPDIR (all under /tmp)
# fails (see TestRealCLI* in cmd/loop-action/realcli_test.go). Without root
# (no unshare) they run without those walls, and the script says so.
#
#   scripts/realcli.sh            install if needed, run the suite
#   scripts/realcli.sh -update    also rewrite the captured real output
#                                 (internal/runner/provider/testdata/real)
#
# LOOP_REALCLI_CACHE is the cache directory (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/loop-action-realcli). Node 20 or later is
# needed; on Debian it is installed when missing.
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
cache=${LOOP_REALCLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loop-action-realcli}
update=
[ "${1:-}" = -update ] && update=-update

start=$(date +%s)
if ! command -v node >/dev/null 2>&1 || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
	echo "realcli: Node 20 or later is needed; installing Debian's nodejs and npm"
	apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm
fi

# Install the exact versions of package.json, with the integrity hashes of
# our lockfile, again only when either changed (a minute and about 1.1 GB).
# Not npm ci: npm 11 writes a lockfile with only this platform's builds of
# opencode's optional per-platform packages, and npm ci then refuses it as
# out of sync with package.json.
mkdir -p "$cache"
lock=scripts/realcli/package-lock.json
stamp="$cache/installed.lock"
if ! cat scripts/realcli/package.json "$lock" | cmp -s - "$stamp" || [ ! -x "$cache/node_modules/.bin/claude" ]; then
	echo "realcli: installing the pinned CLIs into $cache"
	rm -rf "$cache/node_modules" "$stamp"
	cp scripts/realcli/package.json "$lock" "$cache/"
	(cd "$cache" && npm install --no-audit --no-fund --no-save --loglevel=error)
	cat scripts/realcli/package.json "$lock" >"$stamp"
fi
bin="$cache/node_modules/.bin"
for cli in claude codex gemini opencode; do
	printf 'realcli: %s %s\n' "$cli" "$("$bin/$cli" --version 2>/dev/null | head -n 1)"
done
echo "realcli: install size $(du -sh "$cache/node_modules" | cut -f1)"

# The test binary is built outside the walls (it may need the module
# cache), then run inside them.
test="$cache/loop-action.test"
go test -c -o "$test" ./cmd/loop-action

run() {
	cd "$repo/cmd/loop-action"
	LOOP_REALCLI_BIN=$bin LOOP_REALCLI_REQUIRE=1 "$test" -test.run '^TestRealCLI' -test.count=1 -test.v \
		-test.timeout 15m $update
}
log="$cache/last-run.log"
walled=
if [ -z "$update" ] && [ "$(id -u)" = 0 ] && unshare -n -m true 2>/dev/null; then
	walled=1
fi
set +e
if [ -n "$walled" ]; then
	# The checkout, the cache or both may lie under /tmp (a CI checkout
	# there, or HOME there): the fresh /tmp would hide them, so the old
	# /tmp stays reachable, read-only, at $hold, and their paths are moved
	# there.
	hold=$(mktemp -d /run/loop-realcli.XXXXXX 2>/dev/null || mktemp -d /var/tmp/loop-realcli.XXXXXX)
	trap 'rmdir "$hold" 2>/dev/null || true' EXIT
	held() { case "$1" in /tmp/*) printf '%s%s' "$hold" "${1#/tmp}" ;; *) printf '%s' "$1" ;; esac; }
	# shellcheck disable=SC2016
	LOOP_REALCLI_WALLED=1 unshare -n -m sh -c '
		mount --make-rprivate / && mount --bind /tmp "$3" && mount -o remount,bind,ro "$3" &&
		mount -t tmpfs -o mode=1777 tmpfs /tmp &&
		mount -o remount,bind,ro / && ip link set lo up || exit 99
		cd "$0/cmd/loop-action" && exec env TMPDIR=/tmp LOOP_REALCLI_BIN="$1" LOOP_REALCLI_REQUIRE=1 "$2" \
			-test.run "^TestRealCLI" -test.count=1 -test.v -test.timeout 15m' \
		"$(held "$repo")" "$(held "$bin")" "$(held "$test")" "$hold" >"$log" 2>&1
	rc=$?
else
	echo "realcli: no unshare (not root, or -update): running without the network and write walls"
	(run) >"$log" 2>&1
	rc=$?
fi
set -e
grep -E '^(=== RUN|\s*--- (PASS|FAIL|SKIP)|PASS|FAIL|ok )' "$log" | grep -v '=== RUN' || true
if [ "$rc" != 0 ]; then
	cat "$log"
	echo "realcli: the suite failed (exit $rc)"
	exit 1
fi
if grep -q -- '--- SKIP' "$log" || ! grep -q -- '--- PASS: TestRealCLI' "$log"; then
	cat "$log"
	echo "realcli: the suite skipped tests or ran none: it must run them all"
	exit 1
fi
pass=$(grep -c -- '--- PASS' "$log")
echo "realcli: $pass passed, 0 failed in $(($(date +%s) - start))s"
