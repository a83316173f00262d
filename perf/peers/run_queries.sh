#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The committed query comparison: builds the peers that have no Debian package (Jolt, Box2D v3)
# from their source trees when they are not installed yet, configures and builds bp_peer_queries
# against them, and runs it RUNS times, writing perf/results/<machine>/peers_queries_run<i>.csv and
# the printed tables as peers_queries_run<i>.log, then peers_queries.csv: for each scene, query
# and library the median over the runs of median_us, p99_us and build_ms, with the checks summed.
# Usage: perf/peers/run_queries.sh [BUILD_DIR] [MACHINE] [QUERIES] [PASSES] [RUNS]
#        (defaults: build/peers 2core 1000 3 3)
# Environment: BP_PEERS_SRC holds the sources as jolt/ (github:jrouwe/JoltPhysics) and box2d/
# (github:erincatto/box2d), default /work/peers-src; BP_PEERS_PREFIX is where they are installed,
# default $BP_PEERS_SRC/install. A peer whose sources are missing is skipped by bp_peer_queries.
# The Debian peers: apt-get install libembree-dev libspatialindex-dev libnanoflann-dev libbullet-dev.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${1:-build/peers}
machine=${2:-2core}
queries=${3:-1000}
passes=${4:-3}
runs=${5:-3}
src=${BP_PEERS_SRC:-/work/peers-src}
prefix=${BP_PEERS_PREFIX:-$src/install}
jobs=${BP_JOBS:-2}
out=perf/results/$machine

# Release builds of the library alone: no samples, tests, profiler or debug renderer, which would
# be compiled into the library and cost time in its queries.
if [ ! -f "$prefix/lib/cmake/Jolt/JoltConfig.cmake" ] && [ -d "$src/jolt/Build" ]; then
	cmake -S "$src/jolt/Build" -B "$src/build-jolt" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
		-DTARGET_UNIT_TESTS=OFF -DTARGET_HELLO_WORLD=OFF -DTARGET_PERFORMANCE_TEST=OFF -DTARGET_SAMPLES=OFF \
		-DTARGET_VIEWER=OFF -DGENERATE_DEBUG_SYMBOLS=OFF -DINTERPROCEDURAL_OPTIMIZATION=OFF \
		-DDEBUG_RENDERER_IN_DEBUG_AND_RELEASE=OFF -DPROFILER_IN_DEBUG_AND_RELEASE=OFF -DJPH_USE_DX12=OFF \
		-DJPH_USE_VK=OFF -DJPH_USE_MTL=OFF -DJPH_USE_CPU_COMPUTE=OFF -DENABLE_ALL_WARNINGS=OFF -DUSE_AVX512=OFF
	cmake --build "$src/build-jolt" -j "$jobs" --target Jolt
	cmake --install "$src/build-jolt"
fi
if [ ! -f "$prefix/include/box2d/collision.h" ] && [ -f "$src/box2d/CMakeLists.txt" ]; then
	cmake -S "$src/box2d" -B "$src/build-box2d" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
		-DBOX2D_SAMPLES=OFF -DBOX2D_UNIT_TESTS=OFF -DBOX2D_BENCHMARKS=OFF -DBOX2D_VALIDATE=OFF -DBOX2D_AVX2=ON \
		-DBUILD_SHARED_LIBS=OFF
	cmake --build "$src/build-box2d" -j "$jobs"
	cmake --install "$src/build-box2d"
fi

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBP_PEERS_PREFIX="$prefix"
cmake --build "$build" -j "$jobs" --target bp_peer_queries
mkdir -p "$out"
# The load before and after goes into each log: on a shared machine it says how far to trust p99.
for run in $(seq 1 "$runs"); do
	{
		echo "# run $run of $runs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
		"$build/perf/peers/bp_peer_queries" --n 100000,1000000 --scenes uniform3,mixed3,uniform2 \
			--queries "$queries" --passes "$passes" --csv "$out/peers_queries_run$run.csv"
		echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	} | tee "$out/peers_queries_run$run.log"
done

# One run on a shared machine can be preempted through a whole query kind; the median of the
# runs' medians is the figure the README quotes. Columns 6-8 are median_us, p99_us, build_ms;
# 10-15 the check counts; ratio_to_ours is recomputed from the merged medians.
awk -F, -v OFS=, '
function median(list,    v, n, i, j, x) {
	n = split(list, v, " ")
	for (i = 2; i <= n; ++i)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; --j) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
FNR == 1 { header = $0; next }
{
	key = $1 OFS $2 OFS $3 OFS $4 OFS $5
	if (!(key in count)) order[++keys] = key
	++count[key]
	for (c = 6; c <= 8; ++c) values[key, c] = values[key, c] " " $c
	results[key] = $9
	for (c = 10; c <= 15; ++c) sums[key, c] += $c
}
END {
	sub(/ratio_to_ours$/, "runs,ratio_to_ours", header)
	print header
	for (k = 1; k <= keys; ++k) {
		key = order[k]
		split(key, f, OFS)
		for (c = 6; c <= 8; ++c) m[key, c] = median(values[key, c])
		ours = f[1] OFS f[2] OFS f[3] OFS f[4] OFS "broadphase"
		line = key
		for (c = 6; c <= 8; ++c) line = line OFS m[key, c]
		line = line OFS results[key]
		for (c = 10; c <= 15; ++c) line = line OFS sums[key, c]
		print line, count[key], sprintf("%.3f", m[key, 6] / median(values[ours, 6]))
	}
}' "$out"/peers_queries_run*.csv >"$out/peers_queries.csv"
