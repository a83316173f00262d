#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks that the built binaries carry the USDT notes of src/base/probes.h: `readelf -n` must list a
# stapsdt note with provider broadphase for every probe name, and no other broadphase probe.
# Usage: probes_readelf.sh ON|OFF FILE...   (the first argument is BP_USDT; OFF skips: exit 77)
set -eu
usdt=$1
shift
case $usdt in
ON | on | 1 | TRUE | true | YES | yes) ;;
*)
	echo "BP_USDT is off: no probes to check"
	exit 77
	;;
esac
command -v readelf >/dev/null || { echo "readelf not found" >&2; exit 1; }

# Every probe the library defines (src/base/probes.h lists them with their arguments).
expected="acquire build_begin find_pairs_begin find_pairs_end frame_begin frame_end publish release
stage_begin stage_end submit"

status=0
for file in "$@"; do
	if [ ! -f "$file" ]; then
		echo "FAIL $file: no such file (build the library and bp first)" >&2
		status=1
		continue
	fi
	# "Provider: broadphase" is followed by "Name: <probe>" in readelf's note listing.
	names=$(readelf -n "$file" | awk '/Provider: broadphase/ { want = 1; next }
		want && /Name:/ { print $2; want = 0 }' | sort -u)
	if [ -z "$names" ]; then
		echo "FAIL $file: no stapsdt notes with provider broadphase" >&2
		status=1
		continue
	fi
	for probe in $expected; do
		if ! printf '%s\n' "$names" | grep -qx "$probe"; then
			echo "FAIL $file: no broadphase:$probe note" >&2
			status=1
		fi
	done
	for name in $names; do # unquoted: one probe name per word
		# shellcheck disable=SC2086 # one probe name per word
		case " $(printf '%s ' $expected)" in
		*" $name "*) ;;
		*)
			echo "FAIL $file: unexpected probe broadphase:$name (add it to this list and src/base/probes.h)" >&2
			status=1
			;;
		esac
	done
	# perf 6.1 drops every argument of a probe with an immediate ("N@$value") argument;
	# src/base/probes.h sets STAP_SDT_ARG_CONSTRAINT so that none is.
	immediates=$(readelf -n "$file" | awk '/Provider:/ { ours = ($2 == "broadphase") }
		ours && /Arguments:/ && /@\$/ { n++ } END { print n + 0 }')
	if [ "$immediates" -ne 0 ]; then
		echo "FAIL $file: $immediates broadphase probes with immediate arguments (perf cannot read them)" >&2
		status=1
	fi
	count=$(readelf -n "$file" | grep -c 'Provider: broadphase' || true)
	# shellcheck disable=SC2086
	echo "$file: $count broadphase notes, probes:" $names
done
exit $status
