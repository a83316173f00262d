// SPDX-License-Identifier: MIT
// Builds a frame's query index (view_index.h): radix sort by min along the axis of largest
// spread, then a parallel gather of the bounds into that order.
#include "view_index.h"

#include <math.h>
#include <string.h>

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
	bpi_array_free(&scratch->changed);
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

/// The axis of largest spread of the mins (the one that cuts the view thinnest)
/// and the largest extent along it, rounded one ulp up: fl(max - min) may round
/// below the exact extent, and the queries rely on min + extent >= max exactly.
static int choose_axis(const bpi_soa *soa, uint32_t count, int dims, float *extent_out)
{
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
	float extent = 0.0f;
	for (uint32_t i = 0; i < count; ++i) {
		float e = max[i] - min[i];
		extent = e > extent ? e : extent;
	}
	*extent_out = nextafterf(extent, INFINITY);
	return best;
}

/// The build proper, on an axis and extent already chosen.
static bp_status build_on_axis(bpi_view_index *index, bpi_view_index_scratch *scratch, const bpi_soa *soa,
	uint32_t count, int dims, int threads, int axis, float extent)
{
	if (!reserve_index(index, count, dims) || !reserve_items(scratch, count))
		return BP_ERR_OUT_OF_MEMORY;
	const float *min = soa->min[axis];
	bpi_sort_item *items = scratch->items.data;
	for (uint32_t i = 0; i < count; ++i)
		items[i] = bpi_sort_item_make(bpi_radix_float_key(min[i]), i);
	bp_status status = bpi_radix_sort_items(&scratch->radix, items, count, threads);
	if (status != BP_OK)
		return status;
	gather_ctx g = {index, items, soa, dims};
	bpi_parallel_for(count, GATHER_GRAIN, threads, gather, &g);
	index->axis = axis;
	index->extent = extent;
	index->count = count;
	return BP_OK;
}

bp_status bpi_view_index_build(bpi_view_index *index, bpi_view_index_scratch *scratch, const bpi_soa *soa,
	uint32_t count, int dims, int threads)
{
	index->count = 0;
	if (count < BPI_VIEW_INDEX_MIN_COUNT)
		return BP_OK;
	float extent;
	int axis = choose_axis(soa, count, dims, &extent);
	return build_on_axis(index, scratch, soa, count, dims, threads, axis, extent);
}

// An update pays O(count) streaming plus a sort of the changed entities; past
// this fraction changed, the full build's sort and gather cost about as much.
#define UPDATE_MAX_CHANGED_FRACTION 8u

bp_status bpi_view_index_update(bpi_view_index *index, bpi_view_index_scratch *scratch, const bpi_soa *soa,
	uint32_t count, int dims, int threads, const bpi_view_index_changes *changes)
{
	const bpi_view_index *prev = changes->prev;
	if (count < BPI_VIEW_INDEX_MIN_COUNT || !prev || prev->count != changes->previous_count ||
		changes->count > count / UPDATE_MAX_CHANGED_FRACTION)
		return bpi_view_index_build(index, scratch, soa, count, dims, threads);
	index->count = 0;
	float extent;
	int axis = choose_axis(soa, count, dims, &extent);
	if (axis != prev->axis) // the kept order sorts another axis: no use
		return build_on_axis(index, scratch, soa, count, dims, threads, axis, extent);
	if (!reserve_index(index, count, dims) || !reserve_items(scratch, changes->count) ||
		!bpi_array_reserve(&scratch->changed, BP_MAX(count, changes->previous_count)))
		return BP_ERR_OUT_OF_MEMORY;
	// The changed entities, sorted afresh; the kept ones keep their place in prev.
	uint8_t *changed = scratch->changed.data;
	memset(changed, 0, BP_MAX(count, changes->previous_count));
	const float *min = soa->min[axis];
	bpi_sort_item *items = scratch->items.data;
	uint32_t fresh = 0;
	for (uint32_t c = 0; c < changes->count; ++c) {
		uint32_t e = changes->list[c];
		changed[e] = 1;
		if (e < count)
			items[fresh++] = bpi_sort_item_make(bpi_radix_float_key(min[e]), e);
	}
	bp_status status = bpi_radix_sort_items(&scratch->radix, items, fresh, threads);
	if (status != BP_OK)
		return status;
	// Merge by (key, index): the kept entries are in that order in prev already.
	const float *prev_min = prev->min[axis];
	uint32_t out = 0, f = 0;
	for (uint32_t j = 0; j < prev->count; ++j) {
		uint32_t e = prev->order[j];
		if (e >= count || changed[e])
			continue;
		bpi_sort_item kept = bpi_sort_item_make(bpi_radix_float_key(prev_min[j]), e);
		for (; f < fresh && items[f] < kept; ++f, ++out) {
			uint32_t n = bpi_sort_item_index(items[f]);
			index->order[out] = n;
			for (int a = 0; a < dims; ++a) {
				index->min[a][out] = soa->min[a][n];
				index->max[a][out] = soa->max[a][n];
			}
		}
		index->order[out] = e;
		for (int a = 0; a < dims; ++a) {
			index->min[a][out] = prev->min[a][j];
			index->max[a][out] = prev->max[a][j];
		}
		++out;
	}
	for (; f < fresh; ++f, ++out) {
		uint32_t n = bpi_sort_item_index(items[f]);
		index->order[out] = n;
		for (int a = 0; a < dims; ++a) {
			index->min[a][out] = soa->min[a][n];
			index->max[a][out] = soa->max[a][n];
		}
	}
	BP_ASSERT(out == count);
	index->axis = axis;
	index->extent = extent;
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
