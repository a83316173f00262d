#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a program on R ranks of this machine: mpirun.sh MPIEXEC R PROGRAM [ARGS...]
# --oversubscribe lets R exceed the cores (Open MPI); --allow-run-as-root only when root,
# where Open MPI otherwise refuses to start.
set -euo pipefail
mpiexec=$1
ranks=$2
shift 2
flags=()
if "$mpiexec" --version 2>/dev/null | grep -qiE "open mpi|openrte"; then
	flags+=(--oversubscribe)
	[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
fi
exec "$mpiexec" "${flags[@]}" -np "$ranks" "$@"
