#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every function the public headers declare with BP_API is exported by the shared library:
# a source file that defines one without seeing its declaration compiles it hidden.
# usage: exports.sh LIBRARY.so INCLUDE_DIR
set -euo pipefail
library=$1
include=$2
declared=$(cat "$include"/broadphase/{base,types,world,frame,cell_grid,trace}.h | grep -v "^#" |
	tr '\n' ' ' | grep -oE 'BP_API [^;(]*\(' | sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' | sort -u)
exported=$(nm -D --defined-only "$library" | awk '{print $3}' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
if [ -n "$missing" ]; then
	echo "exports.sh: declared BP_API but not exported by $library:" $missing >&2
	exit 1
fi
echo "exports.sh: all $(printf '%s\n' "$declared" | wc -l) BP_API functions are exported"
