#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Long libFuzzer runs. Builds the fuzz targets (clang, BP_FUZZ=ON) in build/fuzz and runs one
# with a persistent corpus in build/fuzz/corpus-TARGET, seeded from tests/fuzz/corpus/TARGET.
# Usage: tools/fuzz.sh TARGET [SECONDS] [-- extra libFuzzer flags]
#   TARGET   fuzz_scene | fuzz_api | fuzz_pairs | fuzz_history | fuzz_trace
#   SECONDS  total time (default 600)
# BP_FUZZ_JOBS (default: the number of cores) parallel jobs and workers. Crashes, timeouts
# and leaks are saved as build/fuzz/run-TARGET/{crash,timeout,leak,oom}-*; the exit status is
# non-zero when any was found.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:-}
case $target in
fuzz_scene | fuzz_api | fuzz_pairs | fuzz_history | fuzz_trace) ;;
*)
	echo "usage: tools/fuzz.sh fuzz_scene|fuzz_api|fuzz_pairs|fuzz_history|fuzz_trace [SECONDS] [-- libFuzzer flags]" >&2
	exit 1
	;;
esac
shift
seconds=600
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	seconds=$1
	shift
fi
[ "${1:-}" = -- ] && shift
jobs=${BP_FUZZ_JOBS:-$(nproc)}

dir=build/fuzz
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
CC=clang cmake -S . -B "$dir" "${generator[@]}" -DBP_FUZZ=ON -DBP_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	>"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" --target "$target"

corpus=$PWD/$dir/corpus-$target
run=$PWD/$dir/run-$target
mkdir -p "$corpus" "$run"
cp -n tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
exe=$PWD/$dir/tests/$target
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
cd "$run"
flags=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1)
if [ "$jobs" -gt 1 ]; then
	# -jobs/-workers: independent processes sharing the corpus directory; each logs to fuzz-N.log.
	flags+=(-jobs="$jobs" -workers="$jobs")
fi
echo "== $target: ${seconds}s, $jobs job(s), corpus $corpus, artifacts in $run"
status=0
"$exe" "${flags[@]}" "$@" "$corpus" || status=$?
ls "$run"/crash-* "$run"/timeout-* "$run"/leak-* "$run"/oom-* 2>/dev/null && status=1
exit $status
