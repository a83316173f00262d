#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a built broadphase into a scratch prefix, builds the example hosts against it through
# find_package (as a user would, warnings as errors) and runs them; each exits non-zero when the
# library's answers disagree with its own checks.
# Usage: run.sh BUILD_DIR [C_COMPILER]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tests/consumer/scratch_install.sh
source "$here/../../tests/consumer/scratch_install.sh" "$1" "${2:-}" example-test
warnings="-Wall -Wextra -Wshadow -Werror"
cmake -S "$here" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
	"-DCMAKE_C_FLAGS=$warnings" "-DCMAKE_CXX_FLAGS=$warnings" >"$work/configure.log" 2>&1 ||
	{ cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

echo "== host_c"
"$work/build/host_c" "$work/host.bpt"
# The motion it recorded, replayed by the tool: every frame against brute force, and the
# plain, incremental and scheduled worlds against each other.
if [ -x "$build/tools/bp/bp" ]; then
	echo "== bp verify host.bpt; bp frames --replay host.bpt"
	"$build/tools/bp/bp" verify "$work/host.bpt" --algo sap
	"$build/tools/bp/bp" frames --replay "$work/host.bpt" | tail -n 1
fi
echo "== host_cpp"
"$work/build/host_cpp"
