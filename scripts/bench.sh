#!/usr/bin/env bash
# scripts/bench.sh runs the benchmarks that have goals and prints every
# figure as one line "name value goal": value a number (the unit ends the
# name: _ms, _us, _bytes, _allocs, or none for a ratio), goal a condition
# on it ("<=1.2", "<20") or "-" for a figure shown for reference. Nothing
# else goes to stdout, so `scripts/bench.sh | awk ...` can check the goals;
# progress goes to stderr. Timings on shared machines are noisy: ratios are
# measured within one run, and the figures with a spread are medians of
# RUNS runs (min and max printed beside them).
#
#   iteration/*     runner: whole iterations with no-op providers (10 nodes,
#                   10 goals of trivial checks), with the fsynced dir: store
#                   and in memory (orchestration alone). Goal: < 20 ms.
#   iteration/spawn_*
#                   runner: iterations of 10 real agent processes (a script
#                   that reads its prompt) and 10 failing command checks,
#                   all at once, against the floor measured after each
#                   iteration in the same process: the same processes
#                   started at once with os/exec, agents then checks.
#                   spawn_* runs the checks one after another ([run]
#                   check_concurrency = 1, the default), spawn_checks0_*
#                   all at once (0); *_ratio is with the fsynced dir:
#                   store, *_ratio_memory in memory (the rest is the
#                   disk's). Goal: spawn_checks0_ratio <= 1.15, the
#                   like-for-like one; spawn_ratio is for reference: its
#                   loop runs the checks one after another where its floor
#                   runs them at once.
#                   *_ratio_setsid is against the same floor with each
#                   process in a session of its own, as loop-action's
#                   containment starts them (both floors in turns).
#   wave/*          runner: an iteration of 8 nodes that each sleep 1 s in
#                   a real process, concurrency 8, against one such node,
#                   interleaved. Goal: efficiency (eight / one) <= 1.05.
#                   floor_efficiency is the same ratio for the agents alone
#                   started with os/exec: what 8 processes cost more than 1.
#   state/dir/*     a checkpoint at iteration 5,000 against one at
#   state/branch/*  iteration 5, for the dir: and the branch: store (a
#                   local remote over file://). Goal: ratio <= 1.2. The
#                   dir: store's save*_ms is the Save call a loop waits for,
#                   durable when it returns.
#                   The branch store saves both lengths in each op, one after
#                   the other, and splits each save in the same saves:
#                   exchange*_ms is its receive-pack exchange (the pack,
#                   and git receive-pack until it exits: ~5 git processes
#                   and ~20 loose objects written twice), ours*_ms the rest
#                   (goal <= 20 ms), save5_over_exchange the save against
#                   that floor (goal <= 1.25); push_ms is one such exchange
#                   alone, git_process_ms the start of one git process;
#                   save_self_cpu_ms and save_git_cpu_ms are the CPU time
#                   a save takes in this process and in git's.
#   state/branch/consolidating/*
#                   the store's own share of the saves that consolidate a
#                   full hundred, against a plain save (reference figures).
#   resume/*        runner: resume of a 1,000-iteration run until the first
#                   new iteration starts (dir: store, and branch: store with
#                   a local remote). Goal: < 200 ms excluding network.
#   isolate/*       internal/runner/isolate: worktree setup + publish of a
#                   10,000-file repository against git worktree add; publish
#                   cost against changed files; warm re-seed of a repository
#                   root's worktree against a plain root's.
#   hook/*          internal/hook: the pre-push hook measuring a pushed
#                   commit against `loop-action gate` (goal <= 1.2 with a
#                   0.3 s check), and a cached answer (goal < 100 ms).
#   budget/*        runner: 8 nodes that each report their cost as they
#                   finish (real processes), 4 at a time, run until
#                   max_cost_usd stops them: how far past the cap the run
#                   went, the spend of the nodes running when the cap was
#                   reached, and their ratio (goal <= 1: the overshoot never
#                   exceeds what was already in flight).
#   uncarried/*     internal/workspace: the listing of ignored files the
#                   runner takes before every measurement, for a root whose
#                   ignored node_modules holds 20,000 files, against a warm
#                   snapshot of a 10,000-file tree (reference figures).
#   walk/*          internal/workspace: the snapshot, the listing of
#                   ignored files and the scan of the guarded paths on the
#                   spawn floor's 100-file checkout, in µs (reference).
#   process/*       internal/process, confined as the binary is: 10 checks
#                   (sh -c) at once through process.Run against os/exec
#                   alone, interleaved (goal: parallel10_ratio <= 1.1), and
#                   against os/exec starting each child in a session of its
#                   own as Run must (_setsid); _loaded while a busy process
#                   per processor competes (with autogroup scheduling a new
#                   session is served later on a busy CPU: the _setsid
#                   floor shows that cost, which is the kernel's).
#                   cpu_*_us: the CPU time this process spends per child,
#                   one at a time, through Run and with os/exec (reference:
#                   steadier than wall time on a loaded machine).
#   provider/*      internal/runner/provider: making and releasing the
#                   private TMPDIRs of 10 calls at once, in µs (reference).
#
# Usage: scripts/bench.sh [RUNS]   (RUNS defaults to 5; takes several
# minutes; needs git)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}

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

# spread NAME GOAL reads one number a line and prints NAME's median with
# GOAL, and its min and max.
spread() {
	sort -g | awk -v name="$1" -v goal="$2" '{a[NR] = $1}
		END {
			if (NR == 0) exit 1
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			printf "%s %.3g %s\n%s_min %.3g -\n%s_max %.3g -\n", name, m, goal, name, a[1], name, a[NR]
		}'
}

# times BENCH SUB prints the ns/op of each run of sub-benchmark SUB in the
# output of go test -bench on stdin, one a line, in milliseconds.
ms() { awk -v sub_="$1" 'index($1, "/" sub_ "-") {print $3 / 1e6}'; }

echo "iterations" >&2
bench -bench '^BenchmarkIteration' -benchtime 300x ./internal/runner/ |
	awk '/^BenchmarkIteration/ {
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
		printf "iteration/%s_ms %.2f <20\n", name, $3 / 1e6
		printf "iteration/%s_bytes %d -\n", name, $5
		printf "iteration/%s_allocs %d -\n", name, $7
	}'

# metric PATTERN UNIT prints, for each benchmark line whose name holds
# PATTERN, the value reported in UNIT.
metric() { awk -v pat="$1" -v unit="$2" 'index($1, pat) { for (i = 4; i <= NF; i++) if ($i == unit) print $(i - 1) }'; }

echo "spawn floor: 10 agents and 10 checks against os/exec alone ($runs runs)" >&2
out=$(bench -bench '^BenchmarkSpawnFloor$' -benchtime 20x -count "$runs" ./internal/runner/)
for checks in serial all; do
	name=spawn
	[ "$checks" = all ] && name=spawn_checks0
	echo "$out" | metric "/store=dir/checks=$checks-" floor-ms/op | spread "iteration/${name}_floor_ms" -
	echo "$out" | metric "/store=dir/checks=$checks-" loop-ms/op | spread "iteration/${name}_loop_ms" -
	goal='<=1.15'
	[ "$checks" = serial ] && goal=-
	echo "$out" | metric "/store=dir/checks=$checks-" ratio | spread "iteration/${name}_ratio" "$goal"
	echo "$out" | metric "/store=dir/checks=$checks-" ratio-setsid | spread "iteration/${name}_ratio_setsid" -
	echo "$out" | metric "/store=memory/checks=$checks-" ratio | spread "iteration/${name}_ratio_memory" -
done

echo "wave efficiency: 8 nodes sleeping 1 s against one ($runs runs)" >&2
out=$(bench -bench '^BenchmarkWave$' -benchtime 5x -count "$runs" ./internal/runner/)
echo "$out" | metric BenchmarkWave one-ms/op | spread wave/one_ms -
echo "$out" | metric BenchmarkWave eight-ms/op | spread wave/eight_ms -
echo "$out" | metric BenchmarkWave efficiency | spread wave/efficiency '<=1.05'
echo "$out" | metric BenchmarkWave floor-efficiency | spread wave/floor_efficiency -

echo "checkpoint cost, iteration 5,000 / iteration 5 ($runs runs)" >&2
# One go test per run: -count runs each length $runs times in a row.
out=$(for _ in $(seq "$runs"); do
	bench -bench '^BenchmarkSave$' -benchtime 20x -count 1 ./internal/state/
done)
echo "$out" | ms iteration=5 | spread state/dir/save5_ms -
echo "$out" | ms iteration=5000 | spread state/dir/save5000_ms -
# Runs interleave the two lengths: pair the k-th of each.
paste <(echo "$out" | ms iteration=5) <(echo "$out" | ms iteration=5000) |
	awk '{print $2 / $1}' | spread state/dir/ratio '<=1.2'

# The branch store's benchmark saves both lengths in every op, one right
# after the other, and splits each save in the same saves: the
# receive-pack exchange (packing, git receive-pack until it exits) and the
# store's own work, and the save against the exchange, git's floor.
out=$(bench -bench '^BenchmarkBranchSave$' -benchtime 20x -count "$runs" -timeout 30m ./internal/state/)
echo "$out" | metric Benchmark save5-ms/op | spread state/branch/save5_ms -
echo "$out" | metric Benchmark save5000-ms/op | spread state/branch/save5000_ms -
echo "$out" | metric Benchmark ratio | spread state/branch/ratio '<=1.2'
echo "$out" | metric Benchmark exchange5-ms/op | spread state/branch/exchange5_ms -
echo "$out" | metric Benchmark exchange5000-ms/op | spread state/branch/exchange5000_ms -
echo "$out" | metric Benchmark ours5-ms/op | spread state/branch/ours_ms '<=20'
echo "$out" | metric Benchmark ours5000-ms/op | spread state/branch/ours5000_ms '<=20'
paste <(echo "$out" | metric Benchmark save5-ms/op) <(echo "$out" | metric Benchmark exchange5-ms/op) |
	awk '{print $1 / $2}' | spread state/branch/save5_over_exchange '<=1.25'
# CPU time per save: this process (its writer of the local repository
# included), and the git processes it waited for.
echo "$out" | metric Benchmark self-cpu-ms/op | spread state/branch/save_self_cpu_ms -
echo "$out" | metric Benchmark git-cpu-ms/op | spread state/branch/save_git_cpu_ms -
# The saves that consolidate a full hundred (ledger and log chunks, or
# summaries) into one blob, against a plain save, the store's own share:
# in the process that stored the hundred, and in a new one whose cache was
# just collected (a resumed run's first consolidation reads the hundred
# from a pack).
out=$(bench -bench '^BenchmarkBranchConsolidatingSave$' -benchtime 3x -count 1 -timeout 30m ./internal/state/)
for proc in same-process new-process; do
	for what in plain summaries ledger+log; do
		echo "$out" | metric "/$proc-" "$what-ms/op" | awk -v name="state/branch/consolidating/${proc}_${what/+/_}_ms" '{printf "%s %.3g -\n", name, $1}'
	done
done
# The exchange alone (git's work for one save's 18 objects), and starting
# one git process.
push=$(bench -bench '^BenchmarkReceivePack$' -benchtime 20x -count "$runs" ./internal/gitremote/)
echo "$push" | ms push | spread state/branch/push_ms -
echo "$push" | ms git-process | spread state/branch/git_process_ms -

echo "resume of a 1,000-iteration run" >&2
bench -bench '^BenchmarkResume1000' -benchtime 10x -timeout 30m ./internal/runner/ |
	awk '/^BenchmarkResume/ {
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
		printf "resume/%s_ms %.1f <200\n", name, $5
	}'

echo "isolation" >&2
internal/runner/isolate/testdata/bench.sh 3 300

echo "git hook" >&2
internal/hook/testdata/bench.sh 9 2000 0.3

echo "cost overshoot ($runs runs)" >&2
over=$(bench -bench '^BenchmarkCostOvershoot$' -benchtime 1x -count "$runs" ./internal/runner/)
for m in overshoot-usd:overshoot_usd:- inflight-usd:inflight_usd:- overshoot/inflight:overshoot_ratio:'<=1'; do
	IFS=: read -r unit name goal <<<"$m"
	echo "$over" | metric Benchmark "$unit" | spread "budget/$name" "$goal"
done

echo "ignored files listed before each measurement ($runs runs)" >&2
bench -bench '^BenchmarkScanUncarried20k$' -benchtime 20x -count "$runs" ./internal/workspace/ |
	awk '/^Benchmark/ {print $3 / 1e6}' | spread uncarried/scan20k_ms -
bench -bench '^BenchmarkSnapshot10k$/^warm$' -benchtime 20x -count "$runs" ./internal/workspace/ |
	awk '/^Benchmark/ {print $3 / 1e6}' | spread uncarried/snapshot10k_warm_ms -

echo "the walks around each measurement, spawn-floor checkout ($runs runs)" >&2
for b in Snapshot100:walk/snapshot100_us ScanUncarried100:walk/uncarried100_us ScanCached100:walk/scancached100_us; do
	IFS=: read -r n name <<<"$b"
	bench -bench "^Benchmark$n\$" -benchtime 2000x -count "$runs" ./internal/workspace/ |
		awk '/^Benchmark/ {print $3 / 1e3}' | spread "$name" -
done

echo "process.Run against os/exec: 10 children at once ($runs runs)" >&2
out=$(PROCESS_TEST_CONFINED=1 bench -bench '^BenchmarkParallel10$' -benchtime 100x -count "$runs" ./internal/process/)
for load in calm loaded; do
	name=process/parallel10
	[ "$load" = loaded ] && name=process/parallel10_loaded
	for m in ratio:ratio:'<=1.1' ratio-setsid:ratio_setsid:-; do
		IFS=: read -r unit suffix goal <<<"$m"
		[ "$load" = loaded ] && goal=-
		echo "$out" | metric "/$load-" "$unit" | spread "${name}_$suffix" "$goal"
	done
done
out=$(PROCESS_TEST_CONFINED=1 bench -bench '^BenchmarkCPU$' -benchtime 300x -count "$runs" ./internal/process/)
echo "$out" | metric "CPU-" run-cpu-us/op | spread process/cpu_run_us -
echo "$out" | metric "CPU-" exec-cpu-us/op | spread process/cpu_exec_us -

echo "a call's private TMPDIR: 10 calls at once ($runs runs)" >&2
bench -bench '^BenchmarkPrivateTemp$' -benchtime 2000x -count "$runs" ./internal/runner/provider/ |
	awk '/^Benchmark/ {print $3 / 1e3}' | spread provider/private_temp10_us -
