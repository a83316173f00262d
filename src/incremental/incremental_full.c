// SPDX-License-Identifier: MIT
// The full path (incremental_full.h): every pair by the pipeline, and with them the grid whose
// cells become the resting index and the kept pairs sorted.
#include "incremental/incremental_full.h"
#include "parallel/pairs.h"

#include <string.h>

/// Frees the grid of the last full step, the resting index no longer in use.
static void drop_grid(bpi_incremental *x)
{
	bpi_indexes grid = {0};
	grid.of[BP_ALGO_GRID] = x->full.of[BP_ALGO_GRID];
	x->full.of[BP_ALGO_GRID] = NULL;
	bpi_indexes_free(&grid);
}

/// Copies `from` into `to`; false (to untouched) when `to` cannot grow.
static bool copy_pairs(bpi_pair_buffer *to, const bpi_pair_buffer *from)
{
	if (to->capacity < from->count) {
		bpi_pair_buffer grown = {0};
		if (!bpi_pair_buffer_reserve(&grown, from->count))
			return false;
		bpi_pair_buffer_free(to);
		*to = grown;
	}
	if (from->count)
		memcpy(to->data, from->data, from->count * sizeof(bp_pair));
	to->count = from->count;
	return true;
}

// ---- the full path --------------------------------------------------------------

bp_status bpi_full_step(bpi_incremental *x, const bpi_scene *scene, bool keep, bp_algorithm algorithm,
	bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	const uint32_t n = scene->count;
	x->resting_valid = x->moving = x->neighbours = x->entering = false;
	bpi_active_invalidate(&x->among);
	bpi_pair_buffer *found = &x->fresh;
	bpi_scene grid_scene = *scene;
	grid_scene.whole = keep; // the grid's cells over every entity become the resting index
	bp_status status = bpi_pipeline_run(&x->full, keep ? BP_ALGO_GRID : algorithm, &grid_scene, found, stats);
	keep = keep && status == BP_OK;
	if (status == BP_ERR_UNSUPPORTED)
		status = bpi_pipeline_run(&x->full, BP_ALGO_AUTO, scene, found, stats);
	if (status != BP_OK)
		return status;
	if (!keep && stats->algorithm != BP_ALGO_GRID)
		drop_grid(x); // its cells and pairs are of no use now, and its pair memory counts
	uint64_t t1 = bpi_now_ns();
	// Everything that can fail before the caller's pairs change.
	if (((keep || sorted) && !bpi_incremental_sort_pairs(x, found, scene->threads)) ||
		(keep && (!bpi_array_reserve(&x->gone, bpi_bit_words(n)) || !bpi_array_grow(&x->is_active, 0, n) ||
				 !bpi_array_reserve(&x->position, n) || !bpi_array_reserve(&x->filter, n) ||
				 !copy_pairs(&x->resting_pairs, found))))
		return BP_ERR_OUT_OF_MEMORY;
	x->rest_stale = false;
	bpi_pair_buffer_hand_over(found, pairs);
	if (keep) {
		if (n) {
			bpi_bits_fill(x->gone.data, 0, n, false);
			memset(x->is_active.data, 0, n);
		}
		const bpi_cells *cells = bpi_resting_cells(x);
		for (uint32_t j = 0; j < n; ++j)
			x->position.data[bpi_cells_entity_at(cells, j)] = j;
		for (uint32_t i = 0; i < n; ++i)
			x->filter.data[i] = (bpi_rest_filter){scene->category[i], scene->mask[i], scene->flags[i]};
		x->resting_count = n;
		x->span = n;
		x->settled_count = 0;
		x->settled_left = 0;
		x->settled_full = false;
		x->active_count = 0;
		x->resting_valid = true;
	}
	stats->ns_merge += bpi_now_ns() - t1;
	stats->active_count = n;
	stats->searched_count = n;
	stats->path = BP_PATH_FULL;
	return BP_OK;
}
