// SPDX-License-Identifier: MIT
// bpi_parallel_for on OpenMP.
#include "parallel.h"

#include <broadphase/world.h>
#include <omp.h>

void bpi_parallel_for(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx)
{
	BP_ASSERT(grain > 0);
	const uint32_t chunks = bpi_chunk_count(count, grain);
	if (threads <= 1 || chunks <= 1) {
		for (uint32_t c = 0; c < chunks; ++c) {
			uint32_t begin = c * grain;
			fn(begin, BP_MIN(count - begin, grain) + begin, c, ctx);
		}
		return;
	}
	// dynamic,1: chunk costs vary a lot (clusters), so hand them out one by one.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
	for (uint32_t c = 0; c < chunks; ++c) {
		uint32_t begin = c * grain;
		fn(begin, BP_MIN(count - begin, grain) + begin, c, ctx);
	}
}

int bpi_resolve_threads(int requested)
{
	BP_ASSERT(requested >= 0 && requested <= BP_MAX_THREADS);
	if (requested > 0)
		return requested;
	int procs = omp_get_num_procs();
	return procs > 0 ? BP_MIN(procs, BP_MAX_THREADS) : 1;
}
