#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `bp` under the address-space cap of `ulimit -v`, as a host short of memory runs it.
# 12,000 entities at one point have 71,994,000 pairs, more than 800 MB holds: every
# algorithm must fail with exit 3 (resource error) about as fast as a success, where
# a step used to ask again for every pair after its first failed allocation (87 s for
# brute). And 1024 threads, whose stacks do not fit 2 GB, must fail the step with
# exit 3 where libgomp used to end the process with exit 1.
# Usage: resource_limits.sh BP_EXECUTABLE
set -uo pipefail

bp=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

awk 'BEGIN { print "# dims=3 n=12000"; for (i = 0; i < 12000; ++i) print i, 1, 1, 1, 1, 1, 1 }' >"$work/one_point.txt"
awk 'BEGIN { print "# dims=3 n=3000"; for (i = 0; i < 3000; ++i) print i, i, 0, 0, i + 2, 1, 1 }' >"$work/row.txt"

# expect CODE TEXT SECONDS -- COMMAND...: COMMAND exits with CODE within SECONDS and says TEXT.
expect() {
	local code=$1 text=$2 seconds=$3
	shift 4
	timeout "$seconds" "$@" >"$work/out" 2>"$work/err"
	local got=$?
	if [ "$got" -ne "$code" ] || ! grep -qF -- "$text" "$work/err"; then
		echo "FAIL: $* exited $got (want $code within ${seconds}s, saying '$text'):"
		cat "$work/err"
		failed=1
	else
		echo "ok: $* -> $got: $(head -c 160 "$work/err")"
	fi
}

# In subshells: the caps must not outlive the check. Stacks at the usual 8 MiB, so
# 1024 of them need 8 GiB of address space.
for algo in brute sap closest quadtree grid; do
	(
		ulimit -v 800000
		expect 3 "out of memory" 20 -- "$bp" pairs "$work/one_point.txt" --algo "$algo" --threads 2
		exit $failed
	) || failed=1
done
(
	ulimit -s 8192 -v 2000000
	expect 3 "cannot start 1024 threads" 20 -- "$bp" pairs "$work/row.txt" --algo sap --threads 1024
	exit $failed
) || failed=1

[ "$failed" -eq 0 ] && echo "resource_limits: ok"
exit $failed
