#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The committed incremental-step runs of bp_perf_incremental, into perf/results/<machine>/ (the
# printed lines beside the CSV as .log, and the machine they came from as machine.txt, or for
# the motion runs incremental_moving_machine.txt):
#   (default) incremental.csv: every workload at 1 and 2 threads, idle and beside a busy host, the
#             2D static_moving, and long runs (random walk and steady motion);
#   motion    incremental_moving.csv: the goals for motion: the still world (1M static + 10K
#             moving, 41 frames, 1 thread, beside the full grid and quiet, with the movers' world
#             alone; and quiet over 201 frames, as the walk carries the movers out of their
#             first fat boxes, idle and beside a busy host; and through the scheduler with a
#             reader querying every view), 1M all moving with a neighbour list (skin 0.2) and 1M
#             with 1% churn beside as many movers (21 frames, 1 and 2 threads), and 1M all moving
#             in spatial order (1 thread);
#   lists     incremental_lists.csv: where a neighbour list pays, 1M all moving by 0.25% to 5% of
#             their extent a frame, skins 0.1, 0.2 and 0.4, in the generator's and in spatial
#             order (1 thread, 21 frames);
#   slow      incremental_slow.csv: the moving state without a skin on 1M all moving by 0.25% and
#             0.5% of their extent a frame, long enough for its entry to pay (1 thread, 101 frames);
#   stall     incremental_stall.csv: still_steps, a new still world's steps 1-12 (1M static + 10K
#             moving) at 1 and 2 threads, 5 rounds, each round also running $BEFORE (another
#             build's bp_perf_incremental) when set, interleaved; the first column names the build.
# Usage: perf/run_incremental.sh [BUILD_DIR] [MACHINE] [motion|lists|slow|stall]   (defaults: build/release 2core)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/release}
machine=${2:-2core}
runs=${3:-steps}
exe=$build/perf/bp_perf_incremental
out=perf/results/$machine
if [ ! -x "$exe" ]; then
	echo "run_incremental.sh: no $exe; build the Release tree first" >&2
	exit 1
fi
mkdir -p "$out"
name=incremental
[ "$runs" = motion ] && name=incremental_moving
[ "$runs" = lists ] && name=incremental_lists
[ "$runs" = slow ] && name=incremental_slow
[ "$runs" = stall ] && name=incremental_stall
csv=$out/$name.csv
log=$out/$name.log
rm -f "$csv" "$log"
machine_file=machine.txt
[ "$runs" = motion ] && machine_file=incremental_moving_machine.txt
[ "$runs" = lists ] && machine_file=incremental_lists_machine.txt
[ "$runs" = slow ] && machine_file=incremental_slow_machine.txt
[ "$runs" = stall ] && machine_file=incremental_stall_machine.txt
perf/machine.sh "$out/$machine_file"

run() {
	echo "## bp_perf_incremental $*" | tee -a "$log"
	"$exe" --csv "$csv" "$@" | tee -a "$log"
}

if [ "$runs" = stall ]; then
	rows=$(mktemp)
	trap 'rm -f "$rows"' EXIT
	echo "build,$("$exe" --only still_steps --frames 1 --static 1 --moving 1 --csv "$rows" >/dev/null && head -1 "$rows")" >"$csv"
	for round in 1 2 3 4 5; do
		for threads in 1 2; do
			for build in ${BEFORE:+before} after; do
				bin=$exe
				[ "$build" = before ] && bin=$BEFORE
				rm -f "$rows"
				echo "## $build round $round: bp_perf_incremental --only still_steps --threads $threads --frames 12" | tee -a "$log"
				"$bin" --only still_steps --threads "$threads" --frames 12 --csv "$rows" | tee -a "$log"
				tail -1 "$rows" | sed "s/^/$build,/" >>"$csv"
			done
		done
	done
	exit 0
fi

if [ "$runs" = slow ]; then
	for step in 0.0025 0.005; do
		run --threads 1 --frames 101 --only all_moving --step "$step"
	done
	exit 0
fi

if [ "$runs" = lists ]; then
	for order in "" --spatial; do
		for step in 0.0025 0.005 0.01 0.02 0.05; do
			for skin in 0.1 0.2 0.4; do
				# shellcheck disable=SC2086
				run --threads 1 --frames 21 --only all_moving --skin "$skin" --step "$step" $order
			done
		done
	done
	exit 0
fi

if [ "$runs" = motion ]; then
	run --threads 1 --frames 41 --only static_moving
	run --threads 1 --frames 41 --only static_moving --skip-full
	run --threads 1 --frames 201 --only static_moving --skip-full
	run --threads 1 --frames 201 --only static_moving --skip-full --host-busy
	run --threads 1 --frames 41 --only static_moving_readers
	for threads in 1 2; do
		run --threads "$threads" --frames 21 --only all_moving --skin 0.2
		run --threads "$threads" --frames 21 --only churn
	done
	run --threads 1 --frames 21 --only all_moving --skin 0.2 --spatial
	exit 0
fi

for threads in 1 2; do
	for busy in "" --host-busy; do
		# shellcheck disable=SC2086
		run --threads "$threads" --frames 21 $busy
		# shellcheck disable=SC2086
		run --threads "$threads" --frames 21 --dims 2 --only static_moving $busy
	done
done
run --threads 1 --frames 200 --only static_moving
run --threads 1 --frames 80 --only churn
for threads in 1 2; do
	run --threads "$threads" --frames 200 --only static_moving --steady
done
