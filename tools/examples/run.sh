#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a built broadphase into a scratch prefix, builds the example hosts against it through
# find_package (as a user would, warnings as errors) and runs them, then builds them against the
# build tree itself (broadphase_DIR) and runs them again; each exits non-zero when the
# library's answers disagree with its own checks.
# Usage: run.sh BUILD_DIR [C_COMPILER]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tests/consumer/scratch_install.sh
source "$here/../../tests/consumer/scratch_install.sh" "$1" "${2:-}" example-test
warnings="-Wall -Wextra -Wshadow -Werror"

# examples NAME PACKAGE_ARGS...: configure, build and run both hosts with find_package pointed
# there; host_c records its motion in NAME.bpt.
examples()
{
	local dir=$work/$1
	shift
	cmake -S "$here" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "$@" \
		"-DCMAKE_C_FLAGS=$warnings" "-DCMAKE_CXX_FLAGS=$warnings" >"$dir.configure.log" 2>&1 ||
		{ cat "$dir.configure.log"; exit 1; }
	cmake --build "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
	echo "== host_c ($dir)"
	"$dir/host_c" "$dir.bpt"
	echo "== host_cpp ($dir)"
	"$dir/host_cpp"
}

examples installed -DCMAKE_PREFIX_PATH="$prefix"
# The motion it recorded, replayed by the tool: every frame against brute force, and the
# plain, incremental and scheduled worlds against each other.
if [ -x "$build/tools/bp/bp" ]; then
	echo "== bp verify installed.bpt; bp frames --replay installed.bpt"
	"$build/tools/bp/bp" verify "$work/installed.bpt" --algo sap
	"$build/tools/bp/bp" frames --replay "$work/installed.bpt" | tail -n 1
fi
examples build_tree -Dbroadphase_DIR="$build"
