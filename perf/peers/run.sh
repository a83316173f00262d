#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The committed peer comparison: generates the shared scenes with `bp gen` (once) and runs
# bp_peers over them, writing perf/results/<machine>/peers.csv and the printed table as peers.log.
# Usage: perf/peers/run.sh [BUILD_DIR] [MACHINE] [RUNS]   (defaults: build/release 2core 5)
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${1:-build/release}
machine=${2:-2core}
runs=${3:-5}
bp=$build/tools/bp/bp
peers=$build/perf/peers/bp_peers
scenes=${BP_PEERS_SCENES:-${TMPDIR:-/tmp}/bp-peers-scenes}
out=perf/results/$machine
for exe in "$bp" "$peers"; do
	if [ ! -x "$exe" ]; then
		echo "run.sh: no $exe; build with the peer packages installed (tools/setup-deps.sh --peers)" >&2
		exit 1
	fi
done
mkdir -p "$scenes" "$out"

files=()
# Smallest first: the CSV is flushed after each scene, so an interrupted run keeps them.
for spec in uniform:2:10000 uniform:3:10000 uniform:2:100000 uniform:3:100000 boxprune:3:100000 \
	uniform:2:1000000 uniform:3:1000000; do
	IFS=: read -r dist dims n <<<"$spec"
	file=$scenes/$dist-${dims}d-$n.bpscene
	[ -s "$file" ] || "$bp" gen --dist "$dist" --n "$n" --dims "$dims" --seed 1 --binary -o "$file"
	files+=("$file")
done
"$peers" --runs "$runs" --csv "$out/peers.csv" "${files[@]}" | tee "$out/peers.log"
