#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bp-mpi on R ranks against one process: for every generated scene kind, 2D and 3D, the
# pairs=/checksum= of `bp-mpi pairs` equal those of `bp pairs` and of the brute oracle, and
# the gathered -o list equals bp's sorted list; every frame of a moving scene (entities
# migrating between ranks) equals `bp pairs --frame K`; a malformed scene fails on every rank.
# usage: scenes.sh BP BP_MPI MPIEXEC R
set -Eeuo pipefail
bp=$1
bp_mpi=$2
mpiexec=$3
ranks=$4
# A command that fails stops the script: say which, so the log shows why.
trap 'echo "scenes.sh ($ranks ranks): line $LINENO: \"$BASH_COMMAND\" failed" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { "$here/mpirun.sh" "$mpiexec" "$ranks" "$bp_mpi" "$@"; }
summary() { grep -o 'pairs=[0-9]* checksum=[0-9a-f]*'; }
failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

for dist in uniform clustered mixed line boxprune; do
	for dims in 2 3; do
		[ "$dist" = boxprune ] && [ "$dims" = 2 ] && continue # boxprune is 3D only
		scene="$dir/$dist$dims.txt"
		"$bp" gen --dist "$dist" --n 3000 --dims "$dims" --seed 7 -o "$scene"
		want=$("$bp" pairs "$scene" -o "$dir/want.pairs" | summary)
		oracle=$("$bp" pairs "$scene" --algo brute | summary)
		got=$(run pairs "$scene" --threads 1 -o "$dir/got.pairs" | summary)
		[ "$want" = "$oracle" ] || fail "$dist ${dims}D: bp pairs ($want) differs from brute ($oracle)"
		[ "$got" = "$want" ] || fail "$dist ${dims}D on $ranks ranks: $got, one process: $want"
		sort -k1,1n -k2,2n "$dir/want.pairs" >"$dir/want.sorted"
		cmp -s "$dir/want.sorted" "$dir/got.pairs" || fail "$dist ${dims}D on $ranks ranks: -o lists differ"
		# The pair list is not empty, or the comparison proves little.
		[ -s "$dir/got.pairs" ] || fail "$dist ${dims}D: no pairs"
	done
done

for dims in 2 3; do
	scene="$dir/moving$dims.txt"
	"$bp" gen --dist uniform --n 3000 --dims "$dims" --frames 8 --seed 3 -o "$scene"
	run frames "$scene" --threads 1 >"$dir/frames.txt"
	for frame in 0 1 2 3 4 5 6 7; do
		want=$("$bp" pairs "$scene" --frame "$frame" | summary)
		got=$(grep "^frame=$frame " "$dir/frames.txt" | summary)
		[ "$got" = "$want" ] || fail "moving ${dims}D frame $frame on $ranks ranks: '$got', one process: $want"
	done
	if [ "$ranks" -gt 1 ]; then
		moved=$(grep -o 'migrated=[0-9]*' "$dir/frames.txt" | cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
		[ "$moved" -gt 0 ] || fail "moving ${dims}D: nothing migrated in 8 frames"
	fi
done

printf '# dims=2\n1 0 0 1 1\n2 0 0 x 1\n' >"$dir/bad.txt"
code=0
run pairs "$dir/bad.txt" >/dev/null 2>"$dir/bad.err" || code=$?
[ "$code" = 2 ] || fail "malformed scene: exit $code, expected 2"
grep -q "bad.txt:3" "$dir/bad.err" || fail "malformed scene: no file:line in: $(cat "$dir/bad.err")"
# Every message names the program that printed it, never bp (mpirun adds lines of its own).
grep -qE "^bp[ :]" "$dir/bad.err" && fail "malformed scene: a message from bp: $(cat "$dir/bad.err")"
code=0
run pairs "$dir/bad.txt" --no-such-option >/dev/null 2>"$dir/option.err" || code=$?
[ "$code" = 1 ] || fail "unknown option: exit $code, expected 1"
grep -q "^bp-mpi pairs: unknown option '--no-such-option' (see 'bp-mpi help pairs')" "$dir/option.err" ||
	fail "unknown option: $(cat "$dir/option.err")"
grep -qE "^bp[ :]" "$dir/option.err" && fail "unknown option: a message from bp: $(cat "$dir/option.err")"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "ok: $ranks ranks"
