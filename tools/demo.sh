#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start: install dependencies, build Release into build/release, generate a
# uniform 1M-box scene and find its pairs with the `bp` tool.
set -euo pipefail
cd "$(dirname "$0")/.."

n=${BP_DEMO_N:-1000000}
label=$n
[ "$n" = 1000000 ] && label=1m
tools/setup-deps.sh

echo "== configure and build (Release) in build/release"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f build/release/CMakeCache.txt ]; then
	cmake -S . -B build/release "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build/release --target bp
bp=build/release/tools/bp/bp

mkdir -p build/demo
# The binary scene form loads much faster; older `bp` builds only write text.
if "$bp" gen --help 2>&1 | grep -q -- --binary; then
	format=(--binary)
	scene=build/demo/uniform-$label.bpscene
else
	format=()
	scene=build/demo/uniform-$label.txt
fi
# The generator is deterministic for a seed, so an existing file is the same scene.
if [ ! -s "$scene" ]; then
	echo "== bp gen --dist uniform --n $n --dims 3 --seed 1 -o $scene ${format[*]}"
	"$bp" gen --dist uniform --n "$n" --dims 3 --seed 1 -o "$scene" "${format[@]}"
fi
echo "== bp pairs $scene --algo auto --runs 5 --stats"
"$bp" pairs "$scene" --algo auto --runs 5 --stats
