#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The motion run behind the incremental worlds' goals: bp_perf_incremental's still world (1M static
# + 10K moving, 41 frames, 1 thread), 1M all moving with a neighbour list (skin 0.2) and 1M with 1%
# churn beside as many movers (21 frames each, 1 and 2 threads), and 1M all moving in spatial
# order (1 thread), into
# perf/results/<machine>/incremental_moving.csv (the printed lines as incremental_moving.log).
# Usage: perf/run_moving.sh [BUILD_DIR] [MACHINE]   (defaults: build/release 2core)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/release}
machine=${2:-2core}
exe=$build/perf/bp_perf_incremental
out=perf/results/$machine
if [ ! -x "$exe" ]; then
	echo "run_moving.sh: no $exe; build the Release tree first" >&2
	exit 1
fi
mkdir -p "$out"
csv=$out/incremental_moving.csv
log=$out/incremental_moving.log
rm -f "$csv" "$log"

run() {
	echo "## bp_perf_incremental $*" | tee -a "$log"
	"$exe" --csv "$csv" "$@" | tee -a "$log"
}

run --threads 1 --frames 41 --only static_moving
for threads in 1 2; do
	run --threads "$threads" --frames 21 --only all_moving --skin 0.2
	run --threads "$threads" --frames 21 --only churn
done
run --threads 1 --frames 21 --only all_moving --skin 0.2 --spatial
echo "csv=$csv"
