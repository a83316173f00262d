#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The committed Box2D-scheme comparison: bp_peer_incremental over the 2D static_moving workload,
# writing perf/results/<machine>/box2d_scheme.csv and the printed lines as box2d_scheme.log.
# Usage: perf/peers/run_incremental.sh [BUILD_DIR] [MACHINE]   (defaults: build/release 2core)
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${1:-build/release}
machine=${2:-2core}
exe=$build/perf/peers/bp_peer_incremental
out=perf/results/$machine
if [ ! -x "$exe" ]; then
	echo "run_incremental.sh: no $exe; build with libbox2d-dev installed (tools/setup-deps.sh --peers)" >&2
	exit 1
fi
mkdir -p "$out"
csv=$out/box2d_scheme.csv
log=$out/box2d_scheme.log
rm -f "$csv" "$log"
# Passive OpenMP workers: spinning ones take the second core from the other subject and from
# everything else on a shared 2-core machine (perf/README.md, bp_perf_frames).
export OMP_WAIT_POLICY=passive

run() {
	echo "## bp_peer_incremental $*" | tee -a "$log"
	"$exe" --check-all --frames 31 --csv "$csv" "$@" | tee -a "$log"
}

sizes=("--static 1000000 --moving 10000" "--static 100000 --moving 1000")
# The protocol of perf/incremental.c: 2 warm-up frames; Box2D's margin (0.1), the world's own.
for threads in 1 2; do
	for size in "${sizes[@]}"; do
		# shellcheck disable=SC2086
		run $size --threads "$threads"
	done
done
# Steady state: after 1000 frames the random walk has carried movers out of fat boxes of every
# margin swept; Box2D at its own margin and at the best one of the sweep below (0.6).
for threads in 1 2; do
	for size in "${sizes[@]}"; do
		for b2 in 0.1 0.6; do
			# shellcheck disable=SC2086
			run $size --threads "$threads" --warmup 1000 --b2-margin "$b2"
		done
	done
done
# Margin sweeps, 1M static + 10K moving, 1 thread, steady state: Box2D's, then the world's.
for b2 in 0.2 0.3 0.4 0.8; do
	run --warmup 1000 --b2-margin "$b2"
done
for bp in 0.2 0.4; do
	run --warmup 1000 --b2-margin 0.6 --margin "$bp"
done
# 2.4's own rule: MoveProxy with the frame's displacement (fat box stretched by 4x the motion).
run --warmup 1000 --b2-displacement
