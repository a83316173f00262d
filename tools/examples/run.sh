#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a built broadphase into a scratch prefix, builds the example hosts against it through
# find_package (as a user would, warnings as errors) and runs them; each exits non-zero when the
# library's answers disagree with its own checks.
# Usage: run.sh BUILD_DIR [C_COMPILER]
set -euo pipefail

build=$(cd "$1" && pwd)
cc=${2:-${CC:-cc}}
here=$(cd "$(dirname "$0")" && pwd)
case "$(basename "$cc")" in
	*clang*) cxx=${cc/clang/clang++} ;;
	*gcc*) cxx=${cc/gcc/g++} ;;
	*) cxx=c++ ;;
esac
command -v "$cxx" >/dev/null || cxx=c++

work=$(mktemp -d "$build/example-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
warnings="-Wall -Wextra -Wshadow -Werror"
cmake -S "$here" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$work/prefix" \
	"-DCMAKE_C_FLAGS=$warnings" "-DCMAKE_CXX_FLAGS=$warnings" >"$work/configure.log" 2>&1 ||
	{ cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

echo "== host_c"
"$work/build/host_c"
echo "== host_cpp"
"$work/build/host_cpp"
