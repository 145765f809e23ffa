#!/usr/bin/env bash
# internal/hook/testdata/bench.sh [RUNS] [FILES] [CHECK_SECONDS] measures
# the pre-push hook against `loop-action gate` run directly, on a
# repository of FILES files whose one check takes CHECK_SECONDS:
#
#   hook/gate_ratio  `hook run pre-push` measuring (LOOP_HOOK=nocache, the
#                    isolated checkout already made; hook/measured_ms) /
#                    `gate` in the working tree (hook/gate_ms). Goal <= 1.2.
#   hook/overhead_ms the same difference: git, the checkout update and its
#                    status check, on top of the checks' time.
#   hook/first_ms    the first hook run (the isolated checkout is made).
#   hook/cached_ms   a cached pre-push answer. Goal < 100.
#   hook/process_ms  `loop-action version`, the floor of any answer.
#
# Each figure is the median of RUNS runs. Prints "name value goal" lines.
set -euo pipefail
runs=${1:-9} files=${2:-2000} check=${3:-0.3}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bin/loop-action" "$repo/cmd/loop-action"
export PATH="$tmp/bin:$PATH" GIT_CONFIG_NOSYSTEM=1 HOME="$tmp" \
	GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
work="$tmp/work"
mkdir -p "$work/src"
cd "$work"
git init -q -b main
for i in $(seq 1 "$files"); do echo "file $i" > "src/f$i.txt"; done
printf 'sleep %s\ntest -f src/f1.txt\n' "$check" > test.sh
cat > loop.toml <<'TOML'
name = "bench"
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
TOML
git add -A && git commit -q -m bench
input="refs/heads/main $(git rev-parse HEAD) refs/heads/main $(printf '0%.0s' $(seq 40))"

# ms prints the milliseconds one run of "$@" takes.
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
hook() { echo "$input" | loop-action hook run pre-push origin; }
nocache() { echo "$input" | LOOP_HOOK=nocache loop-action hook run pre-push origin; }

first=$(ms nocache)
gate=$(for _ in $(seq "$runs"); do ms loop-action gate; done | median)
measured=$(for _ in $(seq "$runs"); do ms nocache; done | median)
cached=$(for _ in $(seq "$runs"); do ms hook; done | median)
floor=$(for _ in $(seq "$runs"); do ms loop-action version; done | median)
awk -v g="$gate" -v m="$measured" -v f="$first" -v c="$cached" -v p="$floor" 'BEGIN {
	printf "hook/gate_ratio %.2f <=1.2\n", m / g
	printf "hook/gate_ms %d -\n", g
	printf "hook/measured_ms %d -\n", m
	printf "hook/overhead_ms %d -\n", m - g
	printf "hook/first_ms %d -\n", f
	printf "hook/cached_ms %d <100\n", c
	printf "hook/process_ms %d -\n", p
}'
