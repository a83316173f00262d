// SPDX-License-Identifier: MIT
// The moving state (incremental_moving.h): its try, its sets after creates and destroys, and its
// step, whose pairs come from those its fat boxes keep.
//
// When most entities change every step (a pile settling, a crowd walking), resting is
// not worth it: the state goes "moving". Every entity is then active with a fat box of
// its own and none rests, so a step costs what left a fat box: entities still inside
// one re-test the pairs their fat boxes keep, and the others search the fat boxes
// (incremental_active.c). A moving step is taken while its counted work, from the last
// moving step's counts, is predicted well below a full step's; otherwise the world
// takes full steps for a while, twice as long after each stay that did not pay, and
// tries again (the cost model that decides: incremental_model.c).
#include "incremental/incremental_moving.h"
#include "incremental/incremental_model.h"

#include <string.h>

bool bpi_begin_entry(bpi_incremental *x, const bpi_scene *scene)
{
	const uint32_t n = scene->count;
	const int dims = scene->dims;
	if (!bpi_array_reserve(&x->entry_bounds, (size_t)2 * dims * n))
		return false;
	for (int axis = 0; axis < dims; ++axis) {
		float *min = x->entry_bounds.data + (size_t)(2 * axis) * n, *max = min + n;
		if (n) {
			memcpy(min, scene->min[axis], n * sizeof *min);
			memcpy(max, scene->max[axis], n * sizeof *max);
		}
	}
	x->entry_count = n;
	x->entering = true;
	return true;
}

bp_status bpi_update_moving(bpi_incremental *x, uint32_t n)
{
	const uint32_t before = x->active_count;
	if (n > before && (!bpi_incremental_cover(x, n) || !bpi_array_grow(&x->is_active, before, n) ||
				  !bpi_array_grow(&x->active, before, n) || !bpi_cross_grow(&x->cross, before, n)))
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t k = before; k < n; ++k) {
		x->active.data[k] = k;
		x->is_active.data[k] = 1;
		x->cross.fat.data[k] = bpi_fat_none();
	}
	if (n != before)
		bpi_active_truncate(&x->among, BP_MIN(n, before));
	x->active_count = n;
	return BP_OK;
}

bp_status bpi_moving_path(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes,
	const bpi_changes *moved, bpi_pair_buffer *pairs, bp_frame_stats *stats, bool *gave_up)
{
	uint64_t t0 = bpi_now_ns();
	const uint32_t m = x->active_count;
	bpi_cross_input in = {.scene = scene, .active = x->active.data, .active_count = m, .active_scene = scene,
		.margin = scene->margin, .moving = true, .filters_kept = changes->bounds_only};
	uint32_t searched = 0;
	const uint32_t most = !bpi_forced_moving(scene) && x->moving_steps > 0 ? (uint32_t)(BPI_MOVING_SEARCH_SHARE * m)
									    : UINT32_MAX;
	bp_status status = bpi_cross_moving(&x->cross, &in, changes->list, changes->count, most, &searched);
	if (status != BP_OK)
		return status;
	*gave_up = searched > most; // its searchers got no new fat boxes
	if (*gave_up)
		return BP_OK; // before any work that would cost more than the full step taken instead
	stats->ns_build += bpi_now_ns() - t0;
	stats->searched_count = searched;
	stats->path = BP_PATH_MOVING;
	return bpi_kept_pairs(x, scene, x->cross.searchers.data, x->cross.searcher_count, moved, pairs, stats);
}

bp_status bpi_kept_pairs(bpi_incremental *x, const bpi_scene *scene, const uint32_t *changed, uint32_t count,
	const bpi_changes *moved, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	uint64_t t0 = bpi_now_ns();
	bp_frame_stats among_stats = {0};
	bpi_pair_buffer *found = &x->fresh;
	bpi_pair_buffer_adopt(found, scene->budget);
	found->count = 0;
	found->failed = false;
	// Every entity is active and none rests: the full step's grid is no resting index now.
	bpi_active_input among = {scene, x->cross.fat.data, x->active.data, x->active_count, x->cross.step, true,
		changed, count, moved ? moved->list : NULL, moved ? moved->count : 0, &x->full};
	bp_status status = bpi_active_find(&x->among, &among, found, &among_stats);
	if (status == BP_OK && (found->failed || !bpi_pair_buffer_may_hold(pairs, found->count)))
		status = BP_ERR_OUT_OF_MEMORY;
	if (status != BP_OK)
		return status;
	bpi_pair_buffer_hand_over(found, pairs);
	x->kept_last = true;
	stats->algorithm = BP_ALGO_GRID;
	stats->thread_count = scene->threads;
	stats->candidate_tests += among_stats.candidate_tests;
	stats->entity_count = scene->count;
	stats->active_count = x->active_count;
	stats->ns_find += bpi_now_ns() - t0;
	return BP_OK;
}
