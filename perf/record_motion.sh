#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Recorded motion through the plain and the incremental world: `bp record --motion` pile, rain and
# crowd (300 frames each) and a random walk of every entity (walk, 100 frames) at each size into a
# temporary directory, then `bp frames --replay` over each trace RUNS times at each of THREADS, without
# and with a neighbour list (--skin: 0.4 m for pile and rain, 0.2 m for crowd, 0.4 for walk): the
# plain, incremental and scheduled worlds step every frame side by side and must agree byte for
# byte. One CSV row per trace, skin, thread count and run into perf/results/<machine>/motion_replay.csv:
# the medians, the ratio of total times, the frames each incremental path took, and the frames in
# which at most a fifth of the changed entities left their fat boxes (held) with the ratio on them;
# the machine they came from into motion_replay_machine.txt.
# Usage: perf/record_motion.sh [BUILD_DIR] [MACHINE] [SIZES] [RUNS] [THREADS]
#        (defaults: build/release 2core "10000 100000" 3 "1 2")
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/release}
machine=${2:-2core}
sizes=${3:-10000 100000}
runs=${4:-3}
thread_counts=${5:-1 2}
bp=$build/tools/bp/bp
out=perf/results/$machine
if [ ! -x "$bp" ]; then
	echo "record_motion.sh: no $bp; build the Release tree first" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

csv=$out/motion_replay.csv
perf/machine.sh "$out/motion_replay_machine.txt"
echo "trace,n,skin,threads,entities_max,frames,run,plain_ms_median,incremental_ms_median,incremental_vs_plain,incremental_vs_plain_total,full,resting,moving,neighbours,held,held_vs_plain,pairs_last" >"$csv"
field() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }
for n in $sizes; do
	for motion in pile rain crowd walk; do
		trace=$tmp/${motion}_$n.bpt
		frames=300
		[ "$motion" = walk ] && frames=100
		"$bp" record --motion "$motion" --n "$n" --frames "$frames" --seed 1 -o "$trace" >/dev/null
		skin=0.4
		[ "$motion" = crowd ] && skin=0.2
		for s in 0 "$skin"; do
			for t in $thread_counts; do
				for run in $(seq 1 "$runs"); do
					line=$("$bp" frames --replay "$trace" --threads "$t" --skin "$s" | tail -n 1)
					row="$motion,$n,$s,$t"
					for f in entities_max frames; do row="$row,$(field "$f" "$line")"; done
					row="$row,$run"
					for f in plain_ms_median incremental_ms_median incremental_vs_plain incremental_vs_plain_total \
						full resting moving neighbours held held_vs_plain pairs_last; do
						row="$row,$(field "$f" "$line")"
					done
					echo "$row" | tee -a "$csv"
				done
			done
		done
	done
done
echo "csv=$csv"
