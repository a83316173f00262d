#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one libFuzzer target for BP_FUZZ_SECONDS (default 30) from its seed corpus.
# Usage: run.sh FUZZER SEED_DIR WORK_CORPUS_DIR. New inputs go to WORK_CORPUS_DIR, never to
# the seeds in the source tree; a crash is saved there as crash-* and the run fails.
set -eu
fuzzer=$1 seeds=$2 work=$3
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
export LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
cd "$work"
exec "$fuzzer" -max_total_time="${BP_FUZZ_SECONDS:-30}" -timeout=20 -rss_limit_mb=2048 -max_len=4096 \
	-print_final_stats=1 "$work" "$seeds"
