#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Thread scaling on a many-core machine, into OUT_DIR (not run in CI):
#   scaling_pairs.csv        bp_perf: grid, sap and hash on 1M uniform and clustered 3D boxes,
#                            and grid and sap on 10M uniform, at each thread count;
#   scaling_model_1m.csv     bp_perf_scaling_model's prediction for 1M, made on this machine;
#   scaling_frames.csv       bp_perf_frames on 1M: the scheduler's overlap and reads during a
#                            build, with at most one thread fewer than the cores (the host's);
#   scaling_incremental.csv  bp_perf_incremental: the still world, 1M all moving with a
#                            neighbour list (skin 0.2) and 1M with 1% churn, 21 frames;
#   scaling_rays.csv         bp_perf_queries_game: a batch of 10,000 rays on 1 and T threads;
#   scaling.log and machine.txt.
# Usage: perf/run_scaling.sh BUILD_DIR OUT_DIR ["1 2 4 8 16"] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: perf/run_scaling.sh BUILD_DIR OUT_DIR [THREADS] [RUNS]}
out=${2:?usage: perf/run_scaling.sh BUILD_DIR OUT_DIR [THREADS] [RUNS]}
threads=${3:-1 2 4 8 16}
runs=${4:-5}
perf_dir=$build/perf
for exe in bp_perf bp_perf_scaling_model bp_perf_frames bp_perf_incremental bp_perf_queries_game; do
	if [ ! -x "$perf_dir/$exe" ]; then
		echo "run_scaling.sh: no $perf_dir/$exe; build the Release tree first" >&2
		exit 1
	fi
done
mkdir -p "$out"
log=$out/scaling.log
rm -f "$out"/scaling_*.csv "$log"
perf/machine.sh "$out/machine.txt"
cores=$(nproc)
export OMP_WAIT_POLICY=passive

run() {
	echo "## $*" | tee -a "$log"
	"$@" 2>&1 | tee -a "$log"
}

# bp_perf and bp_perf_frames write their CSV afresh: keep one header across runs.
tmp_csv=$(mktemp)
trap 'rm -f "$tmp_csv"' EXIT
append_csv() {
	if [ -s "$1" ]; then tail -n +2 "$tmp_csv" >>"$1"; else cat "$tmp_csv" >"$1"; fi
}

list=${threads// /,}
run "$perf_dir/bp_perf" --algos grid,sap,hash --scenes uniform:3,clustered:3 --n 1000000 --threads "$list" \
	--runs "$runs" --no-report --no-coherence --csv "$tmp_csv"
append_csv "$out/scaling_pairs.csv"
run "$perf_dir/bp_perf" --algos grid,sap --scenes uniform:3 --n 10000000 --threads "$list" --runs 3 \
	--no-report --no-coherence --csv "$tmp_csv"
append_csv "$out/scaling_pairs.csv"
run "$perf_dir/bp_perf_scaling_model" 1000000 "$out/scaling_model_1m.csv"
last_build_threads=0
for t in $threads; do
	build_threads=$((t < cores ? t : cores - 1))
	[ "$build_threads" -ge 1 ] || build_threads=1
	[ "$build_threads" -ne "$last_build_threads" ] || continue
	last_build_threads=$build_threads
	run "$perf_dir/bp_perf_frames" --n 1000000 --threads "$build_threads" --csv "$tmp_csv"
	append_csv "$out/scaling_frames.csv"
done
for t in $threads; do
	inc=("$perf_dir/bp_perf_incremental" --csv "$out/scaling_incremental.csv" --threads "$t")
	run "${inc[@]}" --frames 41 --only static_moving
	run "${inc[@]}" --frames 21 --only all_moving --skin 0.2
	run "${inc[@]}" --frames 21 --only churn
done
for t in $threads; do
	[ "$t" -ge 2 ] && run "$perf_dir/bp_perf_queries_game" 1000000 "$runs" "$out/scaling_rays.csv" "$t"
done
echo "run_scaling.sh: done" | tee -a "$log"
