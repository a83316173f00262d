#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The committed incremental-step run: bp_perf_incremental's workloads at 1 and 2 threads, idle
# and beside a busy host, the 2D static_moving, and long runs (random walk and steady motion), into
# perf/results/<machine>/incremental.csv (and the printed lines as incremental.log, and the
# machine they came from as machine.txt).
# Usage: perf/run_incremental.sh [BUILD_DIR] [MACHINE]   (defaults: build/release 2core)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/release}
machine=${2:-2core}
exe=$build/perf/bp_perf_incremental
out=perf/results/$machine
if [ ! -x "$exe" ]; then
	echo "run_incremental.sh: no $exe; build the Release tree first" >&2
	exit 1
fi
mkdir -p "$out"
csv=$out/incremental.csv
log=$out/incremental.log
rm -f "$csv" "$log"
perf/machine.sh "$out/machine.txt"

run() {
	echo "## bp_perf_incremental $*" | tee -a "$log"
	"$exe" --csv "$csv" "$@" | tee -a "$log"
}

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
