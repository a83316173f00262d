#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages broadphase needs to build, test and plot.
# Idempotent: does nothing (not even `apt-get update`) when everything is present.
# --peers also installs the libraries perf/peers compares against (Box2D, Bullet, Chipmunk, ODE, CGAL).
set -euo pipefail

packages=(
	build-essential cmake ninja-build pkg-config
	libmimalloc-dev libcriterion-dev
	libopenmpi-dev openmpi-bin # the MPI component (broadphase::mpi, bp-mpi) and its tests
	clang libomp-14-dev # clang builds use LLVM's OpenMP runtime (the TSan configuration needs it)
	gnuplot-nox         # plots from perf/results
	systemtap-sdt-dev   # <sys/sdt.h> for the optional USDT probes
)

for arg in "$@"; do
	case "$arg" in
	--peers) packages+=(libbox2d-dev libbullet-dev libchipmunk-dev libode-dev libcgal-dev) ;;
	*)
		echo "usage: setup-deps.sh [--peers]" >&2
		exit 1
		;;
	esac
done

if ! command -v dpkg-query >/dev/null; then
	echo "setup-deps.sh: no dpkg-query: this script installs Debian packages only" >&2
	exit 1
fi

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup-deps.sh: all ${#packages[@]} packages present"
	exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null; then
		as_root=(sudo)
	else
		echo "setup-deps.sh: missing packages: ${missing[*]}" >&2
		echo "setup-deps.sh: not root and no sudo; install them as root with:" >&2
		echo "  apt-get install ${missing[*]}" >&2
		exit 1
	fi
fi

echo "setup-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-deps.sh: done"
