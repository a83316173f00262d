#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Very large N (not run in CI): generates a uniform 3D scene of N entities (default
# 50M) and times `bp pairs` on it, with peak memory. Needs about 12 GiB at 50M.
# Usage: perf/large_n.sh [BP_EXECUTABLE] [N] [ALGO] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."

bp=${1:-build/release/tools/bp/bp}
n=${2:-50000000}
algo=${3:-grid}
threads=${4:-0}
scene=build/large/uniform-$n.bpscene
mkdir -p build/large
if [ ! -s "$scene" ]; then
	/usr/bin/time -f "gen: %e s, peak %M KiB" "$bp" gen --dist uniform --n "$n" --dims 3 --binary -o "$scene"
fi
/usr/bin/time -f "pairs: %e s wall in all (load + warm-up + runs), peak %M KiB" \
	"$bp" pairs "$scene" --algo "$algo" --threads "$threads" --runs 3 --stats
