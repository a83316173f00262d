// SPDX-License-Identifier: MIT
// Parallel LSD radix sort on the key half of 64-bit items: per-chunk histograms, a
// prefix sum in (digit, chunk) order, and a per-chunk scatter, so the sort is stable
// and its result does not depend on the thread count.
#include "parallel/sort.h"
#include "parallel/parallel.h"

// 11-bit digits: three passes over a 32-bit key (11 + 11 + 10). As fast as 8-bit digits
// and one parallel region fewer (perf/README.md, "Radix sort digits").
// Overridable (-DRADIX_BITS=8) to measure again.
#ifndef RADIX_BITS
#define RADIX_BITS 11
#endif
#define RADIX_BUCKETS (1u << RADIX_BITS)
#define RADIX_PASSES ((32 + RADIX_BITS - 1) / RADIX_BITS)
// Items per chunk: fixed, so the cut (and with it every offset) is the same for
// any thread count. Large enough that a chunk's histogram work dwarfs its
// 2048-bucket prefix sum.
#define RADIX_GRAIN (1u << 15)
// Below this an insertion sort beats setting up the histograms.
#define RADIX_SMALL 64

static inline uint32_t radix_digit(bpi_sort_item item, int pass)
{
	return (uint32_t)(item >> (32 + pass * RADIX_BITS)) & (RADIX_BUCKETS - 1);
}

typedef struct radix_job {
	const bpi_sort_item *src;
	bpi_sort_item *dst;
	uint32_t *histograms; ///< [chunk][pass][bucket]
	int pass;             ///< the pass to count or scatter; -1: count every pass
} radix_job;

static uint32_t *chunk_histogram(const radix_job *job, uint32_t chunk, int pass)
{
	return job->histograms + ((size_t)chunk * RADIX_PASSES + (size_t)pass) * RADIX_BUCKETS;
}

static void radix_count(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const radix_job *job = ctx;
	const bpi_sort_item *src = job->src;
	if (job->pass >= 0) {
		uint32_t *h = chunk_histogram(job, chunk, job->pass);
		memset(h, 0, RADIX_BUCKETS * sizeof *h);
		for (uint32_t i = begin; i < end; ++i)
			++h[radix_digit(src[i], job->pass)];
		return;
	}
	uint32_t *h = chunk_histogram(job, chunk, 0);
	memset(h, 0, (size_t)RADIX_PASSES * RADIX_BUCKETS * sizeof *h);
	for (uint32_t i = begin; i < end; ++i)
		for (int pass = 0; pass < RADIX_PASSES; ++pass)
			++h[pass * RADIX_BUCKETS + radix_digit(src[i], pass)];
}

static void radix_scatter(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const radix_job *job = ctx;
	uint32_t *offsets = chunk_histogram(job, chunk, job->pass);
	const bpi_sort_item *src = job->src;
	bpi_sort_item *dst = job->dst;
	const int pass = job->pass;
	for (uint32_t i = begin; i < end; ++i)
		dst[offsets[radix_digit(src[i], pass)]++] = src[i];
}

static void radix_copy(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const radix_job *job = ctx;
	memcpy(job->dst + begin, job->src + begin, (size_t)(end - begin) * sizeof *job->dst);
}

bool bpi_insertion_sort_items(bpi_sort_item *items, uint32_t count, uint64_t budget)
{
	uint64_t moves = 0;
	for (uint32_t i = 1; i < count; ++i) {
		bpi_sort_item item = items[i];
		uint32_t j = i;
		while (j > 0 && items[j - 1] > item) {
			items[j] = items[j - 1];
			--j;
		}
		items[j] = item;
		moves += i - j;
		if (moves > budget)
			return false;
	}
	return true;
}

// Stable: an item moves left only past strictly larger keys.
static void insertion_sort(bpi_sort_item *items, uint32_t count)
{
	for (uint32_t i = 1; i < count; ++i) {
		bpi_sort_item item = items[i];
		uint32_t key = bpi_sort_item_key(item);
		uint32_t j = i;
		while (j > 0 && bpi_sort_item_key(items[j - 1]) > key) {
			items[j] = items[j - 1];
			--j;
		}
		items[j] = item;
	}
}

bp_status bpi_radix_sort_reserve(bpi_radix_scratch *scratch, size_t count)
{
	size_t chunks = count == 0 ? 0 : (count + RADIX_GRAIN - 1) / RADIX_GRAIN;
	bool ok = bpi_array_reserve(&scratch->histograms, chunks * RADIX_PASSES * RADIX_BUCKETS) &&
		  bpi_array_reserve(&scratch->items, count);
	return ok ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}

void bpi_radix_sort_free(bpi_radix_scratch *scratch)
{
	bpi_array_free(&scratch->items);
	bpi_array_free(&scratch->histograms);
}

bp_status bpi_radix_sort_items(bpi_radix_scratch *scratch, bpi_sort_item *items, uint32_t count, int threads)
{
	if (count <= RADIX_SMALL) {
		insertion_sort(items, count);
		return BP_OK;
	}
	bp_status status = bpi_radix_sort_reserve(scratch, count);
	if (status != BP_OK)
		return status;
	const uint32_t chunks = bpi_chunk_count(count, RADIX_GRAIN);
	radix_job job = {.src = items, .dst = scratch->items.data, .histograms = scratch->histograms.data, .pass = -1};
	bpi_parallel_for(count, RADIX_GRAIN, threads, radix_count, &job);

	bool first = true;
	for (int pass = 0; pass < RADIX_PASSES; ++pass) {
		// Skip a pass whose digit is constant: it would move nothing. The
		// counts of every pass were taken from the unsorted input, and a
		// permutation does not change them, so this test stays valid.
		bool constant = false;
		for (uint32_t d = 0; d < RADIX_BUCKETS && !constant; ++d) {
			uint64_t total = 0;
			for (uint32_t c = 0; c < chunks; ++c)
				total += chunk_histogram(&job, c, pass)[d];
			constant = total == count;
		}
		if (constant)
			continue;
		job.pass = pass;
		if (!first) // the items moved since they were counted: count this digit again
			bpi_parallel_for(count, RADIX_GRAIN, threads, radix_count, &job);
		first = false;
		// Offsets in (digit, chunk) order: chunk c's items with digit d go after
		// every smaller digit and after earlier chunks' items with digit d.
		uint32_t running = 0;
		for (uint32_t d = 0; d < RADIX_BUCKETS; ++d) {
			for (uint32_t c = 0; c < chunks; ++c) {
				uint32_t *h = chunk_histogram(&job, c, pass);
				uint32_t n = h[d];
				h[d] = running;
				running += n;
			}
		}
		bpi_parallel_for(count, RADIX_GRAIN, threads, radix_scatter, &job);
		const bpi_sort_item *sorted = job.dst;
		job.dst = (bpi_sort_item *)job.src;
		job.src = sorted;
	}
	if (job.src != items) {
		job.dst = items;
		bpi_parallel_for(count, RADIX_GRAIN, threads, radix_copy, &job);
	}
	return BP_OK;
}

// Hoare partition around the median of three: afterwards [lo, j] <= pivot <= [i, hi]
// and everything strictly between j and i equals the pivot.
#define BPI_SELECT(name, T) \
	T name(T *v, size_t count, size_t k) \
	{ \
		BP_ASSERT(k < count); \
		ptrdiff_t lo = 0, hi = (ptrdiff_t)count - 1, want = (ptrdiff_t)k; \
		while (hi > lo) { \
			T a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi]; \
			T pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b); \
			ptrdiff_t i = lo, j = hi; \
			while (i <= j) { \
				while (v[i] < pivot) \
					++i; \
				while (v[j] > pivot) \
					--j; \
				if (i <= j) { \
					T t = v[i]; \
					v[i++] = v[j]; \
					v[j--] = t; \
				} \
			} \
			if (want <= j) \
				hi = j; \
			else if (want >= i) \
				lo = i; \
			else \
				break; \
		} \
		return v[want]; \
	}

BPI_SELECT(bpi_select_float, float)
BPI_SELECT(bpi_select_double, double)
