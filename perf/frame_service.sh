#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The frame service's table (docs: perf/README.md "frame_service.sh"), each row at 1 and 2
# threads, ROUNDS rounds, into OUT_DIR:
#   still.csv     bp_perf_incremental static_moving_readers: 1M static + 10K moving, an
#                 incremental world stepped by bp_world_step beside twins stepped by
#                 bp_frame_step without and with a reader; idle and beside a busy host core;
#   moving.csv    bp frames --stats, 1M uniform all moving, with 10 host queries a frame and
#                 with none: the frame's stages against its step (build + find + merge);
#   stall.csv     bp_perf_incremental still_steps: a new still world's worst step of 3-9;
#   reader.csv    bp_perf_reader_skip: the first query of a reader that reads every 2nd view;
#   statics.csv   bp_perf_statics: a level of 1M static boxes, uniform and mixed sizes;
#   frame_service.log (every program's own lines) and machine.txt.
# Usage: perf/frame_service.sh BUILD_DIR OUT_DIR [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: perf/frame_service.sh BUILD_DIR OUT_DIR [ROUNDS]}
out=${2:?usage: perf/frame_service.sh BUILD_DIR OUT_DIR [ROUNDS]}
rounds=${3:-3}
perf_dir=$build/perf
bp=$build/tools/bp/bp
for exe in "$perf_dir/bp_perf_incremental" "$perf_dir/bp_perf_reader_skip" "$perf_dir/bp_perf_statics" "$bp"; do
	[ -x "$exe" ] || { echo "frame_service.sh: no $exe; build the Release tree first" >&2; exit 1; }
done
mkdir -p "$out"
log=$out/frame_service.log
rm -f "$out"/still.csv "$out"/moving.csv "$out"/stall.csv "$out"/reader.csv "$out"/statics.csv "$log"
perf/machine.sh >"$out/machine.txt"

echo "round,threads,queries,prepare_ms,build_ms,find_ms,merge_ms,view_ms,hierarchy_ms,total_ms,frame_over_step" \
	>"$out/moving.csv"
echo "round,n,threads,skip,keep_frames,first_query_us_median,first_query_us_max,query_us_median,frame_ms_median" \
	>"$out/reader.csv"

# One bp frames line into moving.csv: the stats' medians and the frame over its step.
moving_row() {
	local round=$1 threads=$2 queries=$3 line
	line=$("$bp" frames --n 1000000 --frames 12 --queries "$queries" --threads "$threads" --stats | tail -n 1)
	echo "$line" >>"$log"
	echo "$line" | awk -v r="$round" -v t="$threads" -v q="$queries" '{
		for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
		step = v["build_ms"] + v["find_ms"] + v["merge_ms"]
		printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.3f\n", r, t, q, v["prepare_ms"], v["build_ms"], v["find_ms"],
			v["merge_ms"], v["view_ms"], v["hierarchy_ms"], v["total_ms"], v["total_ms"] / step }' >>"$out/moving.csv"
}

for round in $(seq 1 "$rounds"); do
	for threads in 1 2; do
		for busy in "" --host-busy; do
			"$perf_dir/bp_perf_incremental" --only static_moving_readers --threads "$threads" --frames 31 $busy \
				--csv "$out/still.csv" >>"$log"
		done
		moving_row "$round" "$threads" 10
		moving_row "$round" "$threads" 0
		"$perf_dir/bp_perf_incremental" --only still_steps --threads "$threads" --csv "$out/stall.csv" >>"$log"
		"$perf_dir/bp_perf_reader_skip" 1000000 "$threads" 2 | tail -n +2 | sed "s/^/$round,/" >>"$out/reader.csv"
		for scene in uniform mixed; do
			"$perf_dir/bp_perf_statics" --scene "$scene" --threads "$threads" --frames 5 --csv "$out/statics.csv" \
				>>"$log"
		done
	done
done
echo "frame_service.sh: wrote $out" >&2
