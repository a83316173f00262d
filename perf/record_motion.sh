#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Physics-like motion through the plain and the incremental world: `bp record --motion` pile,
# rain and crowd (300 frames each) at each size into a temporary directory, then one `bp bench`
# over the traces (each replayed whole, every frame timed) at 1 thread, the plain world with
# auto and grid (the incremental world's full path), into perf/results/<machine>/motion_traces.csv.
# Usage: perf/record_motion.sh [BUILD_DIR] [MACHINE] [SIZES]   (defaults: build/release 2core "10000 100000")
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/release}
machine=${2:-2core}
sizes=${3:-10000 100000}
bp=$build/tools/bp/bp
out=perf/results/$machine
if [ ! -x "$bp" ]; then
	echo "record_motion.sh: no $bp; build the Release tree first" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

traces=()
for n in $sizes; do
	for motion in pile rain crowd; do
		trace=$tmp/${motion}_$n.bpt
		"$bp" record --motion "$motion" --n "$n" --frames 300 --seed 1 -o "$trace"
		traces+=("$trace")
	done
done
"$bp" bench "${traces[@]}" --algos auto,grid --worlds full,incremental --threads 1 --no-plots --no-progress \
	--out "$tmp" --name motion_traces
cp "$tmp/bench-motion_traces.csv" "$out/motion_traces.csv"
echo "csv=$out/motion_traces.csv"
