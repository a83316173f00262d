#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a built broadphase into a scratch prefix and uses it as a host would:
# find_package (C, C++, static), pkg-config, and checks the shared library exports only bp_*.
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

work=$(mktemp -d "$build/consumer-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { printf '== %s\n' "$*"; }

step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

step "find_package(broadphase) consumer (C, C++, static)"
cmake -S "$here" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" ||
	{ cat "$work/configure.log"; exit 1; }
cmake --build "$work/build"
"$work/build/consumer"
"$work/build/consumer_cxx"
"$work/build/consumer_static"

step "pkg-config consumer"
libdir=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig:$prefix/share/pkgconfig" \
	pkg-config --variable=libdir broadphase)
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs broadphase)
case "$flags" in
	*"$prefix"*) ;;
	*) echo "pkg-config flags do not point into the install prefix: $flags" >&2; exit 1 ;;
esac
# shellcheck disable=SC2086 # flags are meant to split into words
"$cc" -std=c11 -Wall -Werror "$here/main.c" $flags -o "$work/consumer_pc"
LD_LIBRARY_PATH="$libdir" "$work/consumer_pc"

step "exported symbols of libbroadphase.so"
so=$(ls "$libdir"/libbroadphase.so.*.*.* | head -n 1)
# Defined dynamic symbols that are code or data (not the linker's own section markers).
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtDdBbRrVWiu]$/ { print $3 }' | sed 's/@.*//' | sort -u)
extra=$(printf '%s\n' "$exported" | grep -v -E '^(bp_|_init$|_fini$)' || true)
count=$(printf '%s\n' "$exported" | grep -c '^bp_' || true)
if [ -n "$extra" ]; then
	echo "libbroadphase.so exports symbols outside bp_*:" >&2
	printf '%s\n' "$extra" >&2
	exit 1
fi
[ "$count" -gt 20 ] || { echo "only $count bp_* symbols exported" >&2; exit 1; }
# Scene files and generators are the repository's bp_scene library (tools/scene), not the API.
scene=$(printf '%s\n' "$exported" | grep -E '^(bp_scene_|bp_gen_|bp_distribution_)' || true)
if [ -n "$scene" ]; then
	echo "libbroadphase.so exports scene-file symbols (they belong to tools/scene):" >&2
	printf '%s\n' "$scene" >&2
	exit 1
fi
echo "$count bp_* symbols exported, nothing else"
step "install_consumer: ok"
