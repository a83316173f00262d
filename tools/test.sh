#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds and tests every configuration CI checks; non-zero exit if any fails.
#   release  Release, warnings are errors; also the peer comparison (perf/peers) and its pair check
#   asan     ASan + UBSan, Debug at -O1 (assertions on), BP_TEST_QUICK=1
#   tsan     TSan with clang and LLVM's libomp, the tests labelled `threads`
#   clang    clang Release, warnings are errors
#   fuzz     clang libFuzzer targets (tests/fuzz) with ASan + UBSan, each run BP_FUZZ_SECONDS (default 30)
# Usage: tools/test.sh [CONFIG...]   (default: all five). Build dirs: build/test-CONFIG.
set -uo pipefail
cd "$(dirname "$0")/.."

tools/setup-deps.sh --peers || exit 1
# The documents the code cites, and the layers docs/design.md draws, before any build.
tools/check-citations.sh || exit 1
tools/check-layers.sh || exit 1

configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(release asan tsan clang fuzz)

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
jobs=${BP_TEST_JOBS:-2}

# run_config NAME: configure, build and ctest one configuration in build/test-NAME.
run_config()
{
	local name=$1 dir=build/test-$1 cc=cc env=() select=() targets=()
	local args=(-DBP_WERROR=ON)
	case $name in
	release) args+=(-DCMAKE_BUILD_TYPE=Release) ;;
	asan)
		args+=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1" -DBP_SANITIZE=address)
		env=(BP_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
			"LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp")
		;;
	tsan)
		# clang + libomp: libgomp is not built with TSan instrumentation, so its barriers
		# and task queues look like races (false positives on every parallel region).
		# LLVM's libomp annotates its synchronisation for TSan.
		# Criterion aborts at start-up under TSan (its boxfort arena collides with TSan's
		# memory layout: github.com/Snaipe/Criterion/issues/274), so only the tests
		# labelled `threads` run here: threaded workloads through the bp tool.
		cc=clang
		select=(-L threads)
		args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBP_SANITIZE=thread)
		# libomp's own internals are not instrumented; Archer (LLVM's OMPT tool for
		# TSan) tells TSan about OpenMP's barriers and joins, and
		# ignore_noninstrumented_modules drops reports from inside libomp itself.
		local archer
		archer=$(dirname "$(readlink -f "$(command -v clang)")")/../lib/libarcher.so
		local tsan="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1"
		[ -f tests/tsan.supp ] && tsan+=" suppressions=$PWD/tests/tsan.supp"
		env=(BP_TEST_QUICK=1 "TSAN_OPTIONS=$tsan")
		[ -f "$archer" ] && env+=("OMP_TOOL_LIBRARIES=$archer")
		;;
	clang)
		cc=clang
		args+=(-DCMAKE_BUILD_TYPE=Release)
		;;
	fuzz)
		# Only the fuzz targets are built; ctest -L fuzz runs each from its seed corpus.
		cc=clang
		args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBP_FUZZ=ON)
		targets=(--target fuzz)
		select=(-L fuzz)
		env=("BP_FUZZ_SECONDS=${BP_FUZZ_SECONDS:-30}")
		;;
	*)
		echo "test.sh: unknown configuration '$name' (release asan tsan clang fuzz)" >&2
		return 1
		;;
	esac
	# The peer adapters (perf/peers, C++) are built and checked once, in release.
	[ "$name" = release ] || args+=(-DBP_PEERS=OFF)
	echo "== [$name] configure $dir (CC=$cc ${args[*]})"
	# A cache from another compiler cannot be reconfigured in place.
	if [ -f "$dir/CMakeCache.txt" ] && ! grep -q "^CMAKE_C_COMPILER:.*/$cc\$" "$dir/CMakeCache.txt"; then
		rm -rf "$dir"
	fi
	CC=$cc cmake -S . -B "$dir" "${generator[@]}" "${args[@]}" >"$dir.configure.log" 2>&1 ||
		{ cat "$dir.configure.log"; return 1; }
	echo "== [$name] build"
	cmake --build "$dir" "${targets[@]}" || return 1
	echo "== [$name] ctest"
	(cd "$dir" && env "${env[@]}" ctest -j"$jobs" --output-on-failure "${select[@]}") || return 1
}

mkdir -p build
passed=0
failed=()
summary=()
for name in "${configs[@]}"; do
	start=$SECONDS
	if run_config "$name"; then
		passed=$((passed + 1))
		result=passed
	else
		failed+=("$name")
		result=FAILED
	fi
	summary+=("$(printf '%-8s %-6s %4ds' "$name" "$result" $((SECONDS - start)))")
done

echo "== summary"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
	echo "test.sh: ${#failed[@]} of ${#configs[@]} configurations failed: ${failed[*]}"
	exit 1
fi
echo "test.sh: all $passed configurations passed"
