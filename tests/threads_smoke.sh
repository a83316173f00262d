#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Threaded workloads through the `bp` tool, in every build; for ThreadSanitizer builds
# it is the threaded check. The Criterion
# suites cannot run under TSan (Criterion's boxfort arena collides with TSan's memory
# layout and aborts at start-up: github.com/Snaipe/Criterion/issues/274), so the TSan
# configuration exercises every algorithm's parallel find and merge, and the frame
# scheduler when `bp frames` exists, from here.
# Usage: threads_smoke.sh BP_EXECUTABLE
set -euo pipefail

bp=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for dims in 3 2; do
	for dist in uniform clustered mixed; do
		# Small enough for the brute-force oracle under TSan (~10x slower), large
		# enough for several chunks per algorithm.
		"$bp" gen --dist $dist --n 4000 --dims $dims --seed 7 -o "$work/small.txt"
		echo "== verify $dist dims=$dims n=4000 threads=2"
		"$bp" verify "$work/small.txt" --algo all --threads 2
		# Larger: many chunks, and (clustered) enough pairs for the parallel merge.
		"$bp" gen --dist $dist --n 60000 --dims $dims --seed 8 -o "$work/large.txt"
		for algo in sap grid hash; do
			echo "== pairs $dist dims=$dims n=60000 algo=$algo threads=2"
			"$bp" pairs "$work/large.txt" --algo $algo --threads 2 --runs 2
		done
	done
done

if "$bp" help 2>&1 | grep -q '^  frames'; then
	echo "== frames uniform n=20000 threads=2"
	"$bp" frames --dist uniform --n 20000 --dims 3 --frames 20 --threads 2
fi
echo "threads_smoke: ok"
