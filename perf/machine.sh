#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Which machine a results directory came from: CPU model and vector units, the pair finder's
# build that runs there (src/algorithms/cells.h: AVX2 + FMA + BMI2 take the x86-64-v3 build, AVX-512
# F/VL/BW/DQ on top the v4 one), caches, cores, memory, kernel and compiler.
# Usage: perf/machine.sh [OUT]   (default: standard output)
set -euo pipefail

describe() {
	local flags model finder
	flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
	model=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
	has() { [[ " $flags " == *" $1 "* ]]; }
	finder="x86-64 baseline"
	if has avx2 && has fma && has bmi2; then
		finder="AVX2 (x86-64-v3)"
		if has avx512f && has avx512vl && has avx512bw && has avx512dq; then
			finder="AVX-512 (x86-64-v4)"
		fi
	fi
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "cpu: ${model:-unknown} ($(uname -m))"
	echo "vector units: $(for f in sse4_2 avx avx2 fma avx512f avx512vl avx512bw avx512dq; do has "$f" && printf '%s ' "$f"; done)"
	echo "pair finder build: $finder"
	echo "cpus online: $(nproc)"
	lscpu 2>/dev/null | grep -E '^(L1d|L2|L3) cache' | sed 's/  */ /g' || true
	echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "kernel: $(uname -sr)"
	echo "compiler: $(${CC:-cc} --version 2>/dev/null | head -1)"
}

if [ $# -ge 1 ]; then
	describe > "$1"
else
	describe
fi
