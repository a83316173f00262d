// SPDX-License-Identifier: MIT
// The one parallel seam: fixed chunks of a range, run on OpenMP threads.
#ifndef BP_PARALLEL_H
#define BP_PARALLEL_H

#include "core.h"

/// Work on items [begin, end), which form chunk number `chunk`.
typedef void bpi_range_fn(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx);

/// Chunks of `grain` items: the cut depends only on count and grain, never on
/// the thread count, so per-chunk output merged in chunk order is deterministic.
static inline uint32_t bpi_chunk_count(uint32_t count, uint32_t grain)
{
	return count == 0 ? 0 : (uint32_t)(((uint64_t)count + grain - 1) / grain);
}

/// Runs fn over every chunk of [0, count) on up to `threads` threads and returns
/// when all are done. Chunks may run in any order and at once.
void bpi_parallel_for(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx);

/// Threads a step uses for a requested count in [0, BP_MAX_THREADS] (0 = all
/// cores, at most BP_MAX_THREADS).
int bpi_resolve_threads(int requested);

#endif
