// SPDX-License-Identifier: MIT
// Builds a frame's query index (view_index.h): radix sort by min along the axis of largest
// spread, then a parallel gather of the bounds into that order.
#include "view_index.h"

#include <math.h>

#include "parallel.h"

// Why one sorted axis and not a grid: the index must be exact for any mix of
// sizes and cost the builder little. A box query scans the run of entries whose
// min lies in [lo - extent, hi] along the axis: at 1M uniform 3D entities that
// is ~1% of the view, scanned contiguously (sorted copies, not gathers through
// order[]), which turned a 1 ms scan into tens of microseconds. One huge box
// widens `extent` for every query; the queries then fall back to the plain
// scan when the run is most of the view, so the worst case stays the scan.

#define GATHER_GRAIN 16384u

void bpi_view_index_free(bpi_view_index *index, int dims)
{
	size_t floats = (size_t)index->capacity * sizeof(float);
	bpi_free_aligned(index->order, (size_t)index->capacity * sizeof(uint32_t));
	for (int axis = 0; axis < dims; ++axis) {
		bpi_free_aligned(index->min[axis], floats);
		bpi_free_aligned(index->max[axis], floats);
	}
	*index = (bpi_view_index){0};
}

void bpi_view_index_scratch_free(bpi_view_index_scratch *scratch)
{
	bpi_array_free(&scratch->items);
	bpi_radix_sort_free(&scratch->radix);
}

/// Room for n entries in every array; all grow or none does.
static bool reserve_index(bpi_view_index *index, uint32_t n, int dims)
{
	if (n <= index->capacity)
		return true;
	uint32_t capacity = BP_MAX(n, index->capacity + index->capacity / 2);
	size_t floats = (size_t)capacity * sizeof(float);
	bpi_view_index fresh = {.capacity = capacity, .order = bpi_alloc_aligned((size_t)capacity * sizeof(uint32_t))};
	bool ok = fresh.order != NULL;
	for (int axis = 0; axis < dims; ++axis) {
		fresh.min[axis] = bpi_alloc_aligned(floats);
		fresh.max[axis] = bpi_alloc_aligned(floats);
		ok = ok && fresh.min[axis] && fresh.max[axis];
	}
	if (!ok) {
		bpi_view_index_free(&fresh, dims);
		return false;
	}
	bpi_view_index_free(index, dims);
	*index = fresh;
	return true;
}

static bool reserve_items(bpi_view_index_scratch *scratch, uint32_t n)
{
	return bpi_array_reserve(&scratch->items, n) && bpi_radix_sort_reserve(&scratch->radix, n) == BP_OK;
}

typedef struct gather_ctx {
	bpi_view_index *index;
	const bpi_sort_item *items;
	const bpi_soa *soa;
	int dims;
} gather_ctx;

static void gather(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	gather_ctx *g = ctx;
	bpi_view_index *index = g->index;
	for (uint32_t j = begin; j < end; ++j)
		index->order[j] = bpi_sort_item_index(g->items[j]);
	for (int axis = 0; axis < g->dims; ++axis) {
		const float *min = g->soa->min[axis], *max = g->soa->max[axis];
		float *smin = index->min[axis], *smax = index->max[axis];
		for (uint32_t j = begin; j < end; ++j) {
			uint32_t e = index->order[j];
			smin[j] = min[e];
			smax[j] = max[e];
		}
	}
}

bp_status bpi_view_index_build(bpi_view_index *index, bpi_view_index_scratch *scratch, const bpi_soa *soa,
	uint32_t count, int dims, int threads)
{
	index->count = 0;
	if (count < BPI_VIEW_INDEX_MIN_COUNT)
		return BP_OK;
	if (!reserve_index(index, count, dims) || !reserve_items(scratch, count))
		return BP_ERR_OUT_OF_MEMORY;
	// Axis of largest spread of the mins: the one that cuts the view thinnest.
	int best = 0;
	float best_spread = -1.0f;
	for (int axis = 0; axis < dims; ++axis) {
		const float *min = soa->min[axis];
		float lo = min[0], hi = min[0];
		for (uint32_t i = 1; i < count; ++i) {
			lo = min[i] < lo ? min[i] : lo;
			hi = min[i] > hi ? min[i] : hi;
		}
		if (hi - lo > best_spread) {
			best_spread = hi - lo;
			best = axis;
		}
	}
	const float *min = soa->min[best], *max = soa->max[best];
	bpi_sort_item *items = scratch->items.data;
	float extent = 0.0f;
	for (uint32_t i = 0; i < count; ++i) {
		float e = max[i] - min[i];
		extent = e > extent ? e : extent;
		items[i] = bpi_sort_item_make(bpi_radix_float_key(min[i]), i);
	}
	bp_status status = bpi_radix_sort_items(&scratch->radix, items, count, threads);
	if (status != BP_OK)
		return status;
	gather_ctx g = {index, items, soa, dims};
	bpi_parallel_for(count, GATHER_GRAIN, threads, gather, &g);
	index->axis = best;
	// One ulp up: fl(max - min) may round below the exact extent, and the
	// queries rely on min + extent >= max holding exactly.
	index->extent = nextafterf(extent, INFINITY);
	index->count = count;
	return BP_OK;
}

uint32_t bpi_view_index_lower(const bpi_view_index *index, float x)
{
	const float *min = index->min[index->axis];
	const float extent = index->extent;
	uint32_t lo = 0, hi = index->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (min[mid] + extent >= x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

uint32_t bpi_view_index_upper(const bpi_view_index *index, float x)
{
	const float *min = index->min[index->axis];
	uint32_t lo = 0, hi = index->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (min[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}
