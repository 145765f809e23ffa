#!/usr/bin/env bash
# bench.sh measures isolate against its baselines, each in the same run:
#
#   1. BenchmarkSetupAndPublish10k: a cold worktree of a 10,000-file
#      repository, a node changing 10 files and Publish, against
#      `git worktree add --detach` of the same commit plus copying the 10
#      files back by hand. Prints both and the ratio (goal: <= 1.0).
#   2. BenchmarkPublish: Publish of 1, 10 and 100 changed files in a
#      10,000-file repository against the same in a 1,000-file one. Prints
#      both and the ratio, and the cost of each further changed file in
#      both (for reference: Publish walks the worktree, so its cost follows
#      the repository's size).
#   3. BenchmarkPrepareWarm10k: re-seeding a warm worktree of a 10,000-file
#      root before a run, with 0 and 10 root files changed, for a plain
#      root and for a git repository root (whose worktrees get their own
#      .git, written afresh before every run). Prints both and the ratio.
#
# Prints one "name value goal" line a figure (see scripts/bench.sh); goal
# "-" is a figure for reference, "~1" one that should stay about 1.
#
# Usage: internal/runner/isolate/testdata/bench.sh [setup-iterations [publish-iterations [prepare-iterations]]]
# File creation dominates the setup; it varies a lot between file systems
# (and over time on some virtual machines), which is why both sides run
# interleaved in the same benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
setup=${1:-5}
publish=${2:-300}
prepare=${3:-20}

# bench runs go test's benchmarks with the arguments given and prints its
# output; when go test fails, the output goes to stderr instead (a pipe
# into awk would swallow the failure's message) and the script stops.
bench() {
	local out
	if ! out=$(go test -run '^$' "$@" 2>&1); then
		printf 'go test -bench %s failed:\n%s\n' "$*" "$out" >&2
		exit 1
	fi
	printf '%s\n' "$out"
}

bench -bench '^BenchmarkSetupAndPublish10k$' -benchtime "${setup}x" . |
	awk '/^BenchmarkSetupAndPublish10k/ {
		for (i = 3; i < NF; i++) m[$(i + 1)] = $i
		printf "isolate/setup_publish_10k_ms %s -\n", m["isolate-ms/op"]
		printf "isolate/git_worktree_add_10k_ms %s -\n", m["git-ms/op"]
		printf "isolate/setup_publish_10k_ratio %.2f <=1.0\n", m["isolate/git"]
	}'

bench -bench '^BenchmarkPublish$' -benchtime "${publish}x" . |
	awk '/^BenchmarkPublish\// {
		split($1, p, "/"); sub(/-[0-9]+$/, "", p[3])
		t[p[2] "/" p[3]] = $3
	}
	END {
		n = split("changed=1 changed=10 changed=100", c, " ")
		for (i = 1; i <= n; i++) {
			k = c[i]
			printf "isolate/publish_%s_1k_us %.0f -\n", k, t["files=1000/" k] / 1000
			printf "isolate/publish_%s_10k_us %.0f -\n", k, t["files=10000/" k] / 1000
			printf "isolate/publish_%s_ratio %.2f -\n", k, t["files=10000/" k] / t["files=1000/" k]
		}
		s1 = (t["files=1000/changed=100"] - t["files=1000/changed=1"]) / 99000
		s10 = (t["files=10000/changed=100"] - t["files=10000/changed=1"]) / 99000
		printf "isolate/publish_per_file_1k_us %.1f -\n", s1
		printf "isolate/publish_per_file_10k_us %.1f -\n", s10
		printf "isolate/publish_per_file_ratio %.2f -\n", s10 / s1
	}'

bench -bench '^BenchmarkPrepareWarm10k$' -benchtime "${prepare}x" . |
	awk '/^BenchmarkPrepareWarm10k\// {
		split($1, p, "/"); sub(/-[0-9]+$/, "", p[3])
		t[p[2] "/" p[3]] = $3
	}
	END {
		n = split("root-changed=0 root-changed=10", c, " ")
		for (i = 1; i <= n; i++) {
			k = c[i]
			printf "isolate/prepare_warm_%s_plain_ms %.1f -\n", k, t["repo=false/" k] / 1e6
			printf "isolate/prepare_warm_%s_repo_ms %.1f -\n", k, t["repo=true/" k] / 1e6
			printf "isolate/prepare_warm_%s_ratio %.2f -\n", k, t["repo=true/" k] / t["repo=false/" k]
		}
	}'
