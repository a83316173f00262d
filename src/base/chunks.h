// SPDX-License-Identifier: MIT
// The chunking rule every executor follows: a range cut into fixed chunks by count and grain
// alone, so per-chunk output merged in chunk order is the same for any thread count.
#ifndef BP_CHUNKS_H
#define BP_CHUNKS_H

#include "base/core.h"

/// Work on items [begin, end), which form chunk number `chunk`.
typedef void bpi_range_fn(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx);

/// Chunks of `grain` items: the cut depends only on count and grain, never on
/// the thread count, so per-chunk output merged in chunk order is deterministic.
static inline uint32_t bpi_chunk_count(uint32_t count, uint32_t grain)
{
	return count == 0 ? 0 : (uint32_t)(((uint64_t)count + grain - 1) / grain);
}

/// Runs chunk `chunk` of a loop over [0, count) in chunks of `grain`: the one
/// place every executor turns a chunk number into its items.
static inline void bpi_run_chunk(bpi_range_fn *fn, void *ctx, uint32_t count, uint32_t grain, uint32_t chunk)
{
	const uint32_t begin = chunk * grain;
	fn(begin, begin + BP_MIN(count - begin, grain), chunk, ctx);
}

/// Runs every chunk of a loop on the calling thread, in order.
static inline void bpi_run_serial(uint32_t count, uint32_t grain, bpi_range_fn *fn, void *ctx)
{
	const uint32_t chunks = bpi_chunk_count(count, grain);
	for (uint32_t c = 0; c < chunks; ++c)
		bpi_run_chunk(fn, ctx, count, grain, c);
}

#endif
