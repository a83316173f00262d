#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times two builds of bp_perf_hierarchy (perf/hierarchy.c), before and after a change, in one
# sitting: for each scene, size and thread count the two run back to back, so drift in the
# machine's load falls on both. CSV on stdout: label,scene,n,threads,median_ms,min_ms,serial_median_ms.
# Usage: perf/hierarchy.sh BEFORE_BINARY AFTER_BINARY [RUNS]
set -euo pipefail
before=$1 after=$2 runs=${3:-7}
echo "label,scene,n,threads,median_ms,min_ms,serial_median_ms"
for scene in uniform mixed; do
	for n in 100000 1000000; do
		for threads in 1 2; do
			"$before" --label before --scene "$scene" --n "$n" --threads "$threads" --runs "$runs"
			"$after" --label after --scene "$scene" --n "$n" --threads "$threads" --runs "$runs"
		done
	done
done
