#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a built broadphase into a scratch prefix and uses it as a host would: find_package
# from C, C++-only and mixed projects, shared and static, with no OpenMP flag or private
# dependency reaching the consumer, from the install and from the build tree itself;
# pkg-config; and checks the shared library exports only bp_*.
# Usage: run.sh BUILD_DIR [C_COMPILER]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scratch_install.sh
source "$here/scratch_install.sh" "$1" "${2:-}" consumer-test

step() { printf '== %s\n' "$*"; }

# Where find_package looks: the install (the default) or, for the build-tree run, the build dir.
package=(-DCMAKE_PREFIX_PATH="$prefix")

# consumer NAME LANGUAGES EXECUTABLES...: configure the consumer project with those languages
# enabled, build it, and run each executable. What a consumer compiles must carry no flag of
# the library's own (-fopenmp), and what links the shared library must not depend on the
# library's private dependencies (OpenMP runtime, mimalloc) itself; --no-as-needed makes the
# executables' NEEDED entries show everything their link line named.
consumer()
{
	local name=$1 languages=$2 dir=$work/$1
	shift 2
	step "find_package(broadphase) from a $languages project: $*"
	cmake -S "$here" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
		-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "${package[@]}" \
		-DCMAKE_EXE_LINKER_FLAGS=-Wl,--no-as-needed "-DBP_CONSUMER_LANGUAGES=$languages" >"$dir.configure.log" 2>&1 ||
		{ cat "$dir.configure.log"; exit 1; }
	cmake --build "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
	if grep -n -e '-fopenmp' -e '-Xpreprocessor' "$dir/compile_commands.json" >&2; then
		echo "$name: the package put OpenMP compile flags on the consumer's sources" >&2
		exit 1
	fi
	local exe needed
	for exe in "$@"; do
		"$dir/$exe"
		case $exe in *_static) continue ;; esac
		needed=$(readelf -d "$dir/$exe" | awk '/NEEDED/ { print $NF }')
		if printf '%s\n' "$needed" | grep -E 'gomp|omp|mimalloc' >&2; then
			echo "$name: $exe links the shared library's private dependencies itself" >&2
			exit 1
		fi
	done
}

consumer c C consumer consumer_static
consumer cxx CXX consumer_cxx consumer_cxx_static
consumer c_cxx "C;CXX" consumer consumer_static consumer_cxx consumer_cxx_static

# The build tree's broadphaseConfig.cmake, before any install: broadphase_DIR names the build dir.
package=(-Dbroadphase_DIR="$build")
consumer build_tree "C;CXX" consumer consumer_static consumer_cxx consumer_cxx_static
package=(-DCMAKE_PREFIX_PATH="$prefix")

# A build with the tools installs them beside the library.
if grep -q '^BP_BUILD_TOOLS:BOOL=ON' "$build/CMakeCache.txt"; then
	step "bp installed"
	"$prefix/bin/bp" --help >/dev/null || { echo "the install has no working bin/bp" >&2; exit 1; }
fi

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
