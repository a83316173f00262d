# SPDX-License-Identifier: MIT
# Sourced by the scripts that use an installed broadphase as a host would (tests/consumer/run.sh,
# tools/examples/run.sh), after `set -euo pipefail`, with the build dir as $1, the C compiler as
# $2 (or $CC, or cc) and a name for the scratch dir as $3. Sets build, cc, cxx (the matching C++
# compiler), work (a scratch dir removed on exit), prefix (the install there) and generator.
build=$(cd "$1" && pwd)
cc=${2:-${CC:-cc}}
case "$(basename "$cc")" in
	*clang*) cxx=${cc/clang/clang++} ;;
	*gcc*) cxx=${cc/gcc/g++} ;;
	*) cxx=c++ ;;
esac
command -v "$cxx" >/dev/null || cxx=c++

work=$(mktemp -d "$build/$3.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
echo "== install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
