// SPDX-License-Identifier: MIT
// The incremental state (incremental_state.h): freeing and forgetting it, and the helpers its
// paths share.
#include "incremental/incremental_state.h"
#include "parallel/pairs.h"

#include <string.h>

void bpi_incremental_free(bpi_incremental *x)
{
	if (!x)
		return;
	bpi_indexes_free(&x->full);
	bpi_active_free(&x->among);
	bpi_array_free(&x->gone);
	bpi_array_free(&x->left_now);
	bpi_array_free(&x->position);
	bpi_cells_free(&x->settled);
	bpi_cells_free(&x->settled_spare);
	bpi_array_free(&x->settled_of);
	bpi_array_free(&x->settling);
	bpi_pair_buffer_free(&x->next_pairs);
	bpi_array_free(&x->filter);
	bpi_pair_buffer_free(&x->resting_pairs);
	bpi_array_free(&x->active);
	bpi_array_free(&x->is_active);
	bpi_array_free(&x->joining);
	bpi_array_free(&x->merged);
	bpi_radix_sort_free(&x->radix);
	bpi_array_free(&x->sub_bounds);
	bpi_array_free(&x->sub_filter);
	bpi_array_free(&x->sub_flags);
	bpi_cross_free(&x->cross);
	bpi_pair_buffer_free(&x->fresh);
	bpi_array_free(&x->sort_scratch);
	bpi_array_free(&x->merge_counts);
	bpi_array_free(&x->entry_bounds);
	bpi_free(x, sizeof *x);
}

void bpi_incremental_forget(bpi_incremental *x)
{
	if (x)
		x->resting_valid = x->moving = x->neighbours = x->entering = x->kept_last = false;
}

bool bpi_incremental_sort_pairs(bpi_incremental *x, bpi_pair_buffer *p, int threads)
{
	return bpi_array_reserve(&x->sort_scratch, p->count) &&
	       bpi_pairs_sort_canonical(p->data, p->count, x->sort_scratch.data, threads);
}

bool bpi_incremental_cover(bpi_incremental *x, uint32_t n)
{
	if (n <= x->span)
		return true;
	if (!bpi_array_grow(&x->gone, bpi_bit_words(x->span), bpi_bit_words(n)) ||
		!bpi_array_grow(&x->position, x->span, n) || !bpi_array_grow(&x->filter, x->span, n))
		return false;
	bpi_bits_fill(x->gone.data, x->span, n, true);
	x->span = n;
	return true;
}

bool bpi_every_active(bpi_incremental *x, const bpi_scene *scene, float margin, bool searched)
{
	const uint32_t n = scene->count;
	if (!bpi_array_reserve(&x->gone, bpi_bit_words(n)) || !bpi_array_grow(&x->is_active, 0, n) ||
		!bpi_array_reserve(&x->position, n) || !bpi_array_reserve(&x->filter, n) ||
		!bpi_array_reserve(&x->active, n) || !bpi_cross_start_grown(&x->cross, scene, margin, searched))
		return false;
	if (n) {
		bpi_bits_fill(x->gone.data, 0, n, true);
		memset(x->is_active.data, 1, n);
	}
	for (uint32_t k = 0; k < n; ++k)
		x->active.data[k] = k;
	bpi_active_invalidate(&x->among);
	x->active_count = x->span = n;
	x->resting_count = x->settled_count = x->settled_left = 0;
	x->settled_full = false;
	x->resting_pairs.count = 0;
	x->rest_stale = false;
	x->resting_valid = x->moving = x->neighbours = false;
	return true;
}

bp_status bpi_subset_scene(bpi_incremental *x, const bpi_scene *s, const uint32_t *list, uint32_t m, bool filters,
	bpi_scene *sub)
{
	const int dims = s->dims;
	if (!bpi_array_reserve(&x->sub_bounds, (size_t)m * 2 * dims) || !bpi_array_reserve(&x->sub_filter, 2 * (size_t)m) ||
		!bpi_array_reserve(&x->sub_flags, m))
		return BP_ERR_OUT_OF_MEMORY;
	*sub = *s;
	sub->count = m;
	float *bounds = x->sub_bounds.data;
	uint64_t *category = x->sub_filter.data, *mask = category + m;
	for (int axis = 0; axis < dims; ++axis) {
		float *min = bounds + (size_t)(2 * axis) * m, *max = min + m;
		for (uint32_t k = 0; k < m; ++k) {
			min[k] = s->min[axis][list[k]];
			max[k] = s->max[axis][list[k]];
		}
		sub->min[axis] = min;
		sub->max[axis] = max;
	}
	if (!filters) {
		sub->category = sub->mask = NULL;
		sub->flags = NULL;
		return BP_OK;
	}
	for (uint32_t k = 0; k < m; ++k) {
		category[k] = s->category[list[k]];
		mask[k] = s->mask[list[k]];
		x->sub_flags.data[k] = s->flags[list[k]];
	}
	sub->category = category;
	sub->mask = mask;
	sub->flags = x->sub_flags.data;
	return BP_OK;
}
