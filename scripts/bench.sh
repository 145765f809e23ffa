#!/usr/bin/env bash
# scripts/bench.sh runs the benchmarks that have goals and prints each
# figure with its baseline, measured in the same run on the same machine.
# Timings on shared machines are noisy: compare ratios, not absolutes.
#
#   1. runner: whole iterations with no-op providers (10 nodes, 10 goals of
#      trivial checks): time and allocations per iteration, with the fsynced
#      dir: store and in memory (orchestration alone). Goal: < 20 ms.
#   2. state: a checkpoint at iteration 500 against one at iteration 5, for
#      the dir: and the branch: store. Goal: ratio <= 1.5.
#   3. runner: resume of a 1,000-iteration run until the first new
#      iteration starts (dir: store, and branch: store with a local remote).
#      Goal: < 200 ms excluding network.
#   4. internal/runner/isolate: worktree setup + publish of a 10,000-file repository
#      against git worktree add; publish cost against changed files; warm
#      re-seed of a repository root's worktree (its own .git) against a plain root's.
#   5. internal/hook: the pre-push hook measuring a pushed commit against
#      `loop-action gate` (goal <= 1.2x with a 0.3 s check), and a cached
#      answer (goal < 100 ms).
#   6. internal/workspace: the listing of ignored files the runner takes
#      before every measurement, for a root whose ignored node_modules holds
#      20,000 files, against a warm snapshot of a 10,000-file tree.
#
# Usage: scripts/bench.sh   (takes a few minutes; needs git)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== iterations"
go test -run '^$' -bench '^BenchmarkIteration' -benchtime 300x ./internal/runner/ |
	awk '/^BenchmarkIteration/ {printf "%-32s %8.2f ms/iteration %8d B/op %6d allocs/op\n", $1, $3/1e6, $5, $7}'

echo "== checkpoint cost, iteration 500 / iteration 5"
for b in '^BenchmarkSave$' '^BenchmarkBranchSave$'; do
	go test -run '^$' -bench "$b" -benchtime 20x -count 3 ./internal/state/ |
		awk -v name="$b" '/iteration=5-/ {a += $3; na++} /iteration=500-/ {c += $3; nc++}
			END {printf "%-26s iteration 5: %6.2f ms, iteration 500: %6.2f ms, ratio %.2f (goal <= 1.5)\n",
				name, a/na/1e6, c/nc/1e6, (c/nc)/(a/na)}'
done

echo "== resume of a 1,000-iteration run"
go test -run '^$' -bench '^BenchmarkResume1000' -benchtime 10x -timeout 30m ./internal/runner/ |
	awk '/^BenchmarkResume/ {printf "%-32s %8.2f ms until the first new iteration (goal < 200 ms)\n", $1, $5}'

echo "== isolation"
internal/runner/isolate/testdata/bench.sh 3 300

echo "== git hook"
internal/hook/testdata/bench.sh 9 2000 0.3

echo "== ignored files listed before each measurement"
for b in '^BenchmarkScanUncarried20k$' '^BenchmarkSnapshot10k$/^warm$'; do
	go test -run '^$' -bench "$b" -benchtime 20x -count 3 ./internal/workspace/ |
		awk '/^Benchmark/ {t += $3; n++; name = $1} END {printf "%-36s %8.2f ms\n", name, t/n/1e6}'
done
