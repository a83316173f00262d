#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start: install dependencies, build Release into build/release, find every
# pair among 1M boxes with `bp pairs`, then drive 1M moving boxes through the frame
# scheduler with `bp frames` while the host thread queries the last frame.
set -euo pipefail
cd "$(dirname "$0")/.."

n=${BP_DEMO_N:-1000000}
frames=${BP_DEMO_FRAMES:-30}
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
scene=build/demo/uniform-$n.bpscene
# The generator is deterministic for a seed, so an existing file is the same scene.
if [ ! -s "$scene" ]; then
	echo "== bp gen --dist uniform --n $n --dims 3 --seed 1 --binary -o $scene"
	"$bp" gen --dist uniform --n "$n" --dims 3 --seed 1 --binary -o "$scene"
fi
echo "== bp pairs $scene --runs 5 --stats"
"$bp" pairs "$scene" --runs 5 --stats
echo "== bp frames --dist uniform --n $n --dims 3 --frames $frames"
"$bp" frames --dist uniform --n "$n" --dims 3 --frames "$frames"
