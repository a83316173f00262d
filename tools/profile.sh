#!/bin/sh
# SPDX-License-Identifier: MIT
# Profiles `bp pairs` on one scene: builds RelWithDebInfo with frame pointers (build/profile), runs it
# under `perf stat` and `perf record --call-graph fp`, and prints the hottest functions per stage.
#
# usage: tools/profile.sh [--algo NAME] [--threads T] [--runs R] [--top K] [--build-dir DIR]
#                         SCENE | --gen "DIST N DIMS"
#   SCENE            a scene file (text or binary) for `bp pairs`
#   --gen "D N DIMS" generate it with `bp gen --binary` (cached in DIR/scenes/)
#   --algo NAME      algorithm (default auto)       --threads T  threads, 0 = all (default 0)
#   --runs R         steps in one process (default 5): R steps outweigh the scene load
#   --top K          functions listed per stage (default 5)
#   --build-dir DIR  build folder (default build/profile under the repository)
# Everything perf writes stays in DIR (perf.data, perf-stat.txt, perf-report.txt).
#
# Stages, from the function that holds the sample (self time, --no-children). The names are the
# library's own, so this list follows src/; first match wins:
#   prepare  bpi_scene_of_soa bpi_soa_copy snapshot                  (snapshot of the world)
#   build    radix_* *_sort_* sap_keys_* sap_choose_axis sap_*_chunk bpi_sap_grid_* bpi_sap_layout_*
#            stats_chunk key_part count_block prefix_block scatter_part *levels* *extent*
#            (sort, region layout, cell keys and counting sort)
#   find     find_chunk brute_rows *sweep* sap_corner_ok table_row bpi_scene_* bpi_pair_push
#            bpi_pair_buffer_* *find_pairs*                            (overlap tests into chunk buffers)
#   merge    *merge* compare_pairs bp_pairs_sort                       (chunk buffers into one array,
#                                                                     canonical order when asked)
#   view     sort_pairs counting_pass build_adjacency build_keys build_events key_difference
#            bpi_bvh_* bpi_view_hierarchy_* gather               (scheduler only: bp frames)
#   tool     bp_scene_* scenefile_* cli_* bp_world_create_entities bpi_world_check_box
#            bp_pairs_checksum bp_splitmix64 strto* *printf*          (bp itself: load, checksum)
#   openmp   anything in libgomp (workers waiting at barriers: OMP_WAIT_POLICY=active spins)
#   kernel   [k] symbols (page faults on first touch of new arrays, scheduling)
#   other    everything else (libc memcpy/memset, mimalloc, ...)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/profile"
algo=auto
threads=0
runs=5
top=5
scene=
gen=

usage() {
	sed -n '6,14p' "$0" | sed 's/^# \{0,1\}//'
	exit "$1"
}

while [ $# -gt 0 ]; do
	case $1 in
	--algo) algo=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--top) top=$2; shift 2 ;;
	--build-dir) build=$2; shift 2 ;;
	--gen) gen=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	-*) echo "profile.sh: unknown option $1" >&2; usage 1 >&2 ;;
	*) scene=$1; shift ;;
	esac
done
if [ -z "$scene" ] && [ -z "$gen" ]; then
	echo "profile.sh: give a SCENE file or --gen \"DIST N DIMS\"" >&2
	usage 1 >&2
fi

if ! command -v perf >/dev/null 2>&1; then
	echo "profile.sh: perf not found (Debian: apt-get install linux-perf)" >&2
	exit 1
fi
# perf_event_paranoid > 2 (or > 1 without CAP_PERFMON) refuses unprivileged profiling.
if ! perf stat -e task-clock -- true >/dev/null 2>&1; then
	echo "profile.sh: 'perf stat true' fails: kernel.perf_event_paranoid is" \
		"$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')." >&2
	echo "  Allow user-space profiling:    sudo sysctl kernel.perf_event_paranoid=1" >&2
	echo "  Kernel symbols too (optional): sudo sysctl kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0" >&2
	exit 1
fi

# ---- build: RelWithDebInfo keeps -O2 and adds -g and frame pointers (cmake/profiling.cmake) ----
if [ ! -f "$build/CMakeCache.txt" ]; then
	generator=
	command -v ninja >/dev/null 2>&1 && generator="-G Ninja"
	# shellcheck disable=SC2086 # $generator is empty or two words
	cmake -S "$root" -B "$build" $generator -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DBP_BUILD_TESTS=OFF -DBP_BUILD_PERF=OFF >"$build.configure.log" 2>&1 ||
		{ cat "$build.configure.log" >&2; exit 1; }
	rm -f "$build.configure.log"
fi
cmake --build "$build" --target bp >"$build/build.log" 2>&1 || { cat "$build/build.log" >&2; exit 1; }
bp="$build/tools/bp/bp"

if [ -n "$gen" ]; then
	# shellcheck disable=SC2086 # "DIST N DIMS" splits into three words on purpose
	set -- $gen
	[ $# -eq 3 ] || { echo "profile.sh: --gen wants \"DIST N DIMS\", got \"$gen\"" >&2; exit 1; }
	mkdir -p "$build/scenes"
	scene="$build/scenes/$1-$2-$3.bps"
	[ -f "$scene" ] || "$bp" gen --dist "$1" --n "$2" --dims "$3" --binary -o "$scene"
fi
[ -f "$scene" ] || { echo "profile.sh: no scene file $scene" >&2; exit 1; }

set -- "$bp" pairs "$scene" --algo "$algo" --threads "$threads" --runs "$runs" --stats
echo "== $*"

# ---- perf stat: counters for the whole process (load + R steps). A VM without a PMU reports
# cycles/instructions as <not supported>; task-clock (software) always works. ----
perf stat -o "$build/perf-stat.txt" -e task-clock,cycles,instructions,cache-misses,branch-misses -- "$@" \
	>"$build/bp-stat.txt"
cat "$build/bp-stat.txt"
grep -E 'task-clock|cycles|instructions|cache-misses|branch-misses|elapsed' "$build/perf-stat.txt"

# ---- perf record: call graphs by frame pointer (cheap, exact with this build). ----
perf record -q -g --call-graph fp -o "$build/perf.data" -- "$@" >/dev/null 2>"$build/perf-record.log" ||
	{ cat "$build/perf-record.log" >&2; exit 1; }
perf report -i "$build/perf.data" --no-children --sort dso,symbol --stdio -g none -t '|' \
	>"$build/perf-report.txt" 2>/dev/null

echo
echo "== hottest functions per stage (self time, % of all samples; full report: $build/perf-report.txt)"
awk -F'|' -v top="$top" '
function stage(dso, sym) {
	if (sym ~ /^\[k\]/) return "kernel"
	if (dso ~ /libgomp/) return "openmp"
	sub(/^\[\.\] /, "", sym)
	if (sym ~ /^(bpi_scene_of_soa|bpi_soa_copy|snapshot)$/) return "prepare"
	if (sym ~ /merge/ || sym ~ /^(compare_pairs|bp_pairs_sort)$/) return "merge"
	if (sym ~ /^(sort_pairs|counting_pass|build_adjacency|build_keys|build_events|key_difference|gather)$/ ||
		sym ~ /^bpi_view_(bvh|hierarchy)_/) return "view"
	if (sym ~ /^(bp_scene_|scenefile_|cli_|strto|bp_world_create_entities|bpi_world_check_box|bp_pairs_checksum|bp_splitmix64)/ ||
		sym ~ /printf/) return "tool"
	if (sym ~ /^(find_chunk|brute_rows|sap_corner_ok|table_row|bpi_pair_push)$/ || sym ~ /sweep/ ||
		sym ~ /^bpi_scene_/ || sym ~ /^bpi_pair_buffer_/ || sym ~ /find_pairs/) return "find"
	if (sym ~ /^radix_/ || sym ~ /_sort_/ || sym ~ /insertion_sort/ || sym ~ /^sap_keys_/ ||
		sym ~ /^sap_choose_axis$/ || sym ~ /^sap_.*_chunk$/ || sym ~ /^bpi_sap_(grid|layout)_/ ||
		sym ~ /^(stats_chunk|key_part|count_block|prefix_block|scatter_part)$/ || sym ~ /levels|extent/)
		return "build"
	return "other"
}
/^#/ || NF < 3 { next }
{
	pct = $1; gsub(/[% ]/, "", pct)
	dso = $2; gsub(/^ +| +$/, "", dso)
	sym = $3; gsub(/^ +| +$/, "", sym)
	s = stage(dso, sym)
	total[s] += pct
	if (count[s] < top) { count[s]++; line[s] = line[s] sprintf("    %6.2f%%  %s  (%s)\n", pct, sym, dso) }
}
END {
	n = split("prepare build find merge view tool openmp kernel other", order, " ")
	for (i = 1; i <= n; i++) {
		s = order[i]
		if (!(s in total)) continue
		printf "%-8s %6.2f%%\n%s", s, total[s], line[s]
	}
}' "$build/perf-report.txt"
echo
echo "The library's own per-stage times are on bp's stats line above (ns_build, ns_find, ns_merge, last step)."
