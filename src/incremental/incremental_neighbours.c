// SPDX-License-Identifier: MIT
// The neighbour list (incremental_neighbours.h): a step from the pairs of the grown boxes, or
// the list found again, or full steps while lists do not pay.
#include "incremental/incremental_neighbours.h"
#include "incremental/incremental_full.h"
#include "incremental/incremental_model.h"
#include "incremental/incremental_moving.h"

/// The neighbour list is found again for all once more than this share of the
/// entities left their grown boxes: searches that read many rows cost more than
/// finding the list again (perf/README.md, "Incremental: moving worlds").
#define NEIGHBOURS_SEARCH_SHARE 0.02
/// A list that must be found again the step after it was found never pays: finding
/// it is a full step over the grown boxes, with more pairs, and more. The world then
/// takes full steps, as the plain world does, for a wait that doubles after each such
/// list, and then finds one again. Lists that serve more steps may pay or not, by
/// how much of the world moves (perf/README.md, "Incremental: moving worlds").
#define NEIGHBOURS_PAYS_STEPS 2u

bp_status bpi_neighbour_path(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes,
	const bpi_changes *moved, bp_algorithm algorithm, bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	if (x->neighbour_wait > 0) {
		x->neighbour_wait--;
		return bpi_full_step(x, scene, false, algorithm, sorted, pairs, stats);
	}
	uint64_t t0 = bpi_now_ns();
	const float half = scene->skin * 0.5f;
	const uint32_t most = (uint32_t)(NEIGHBOURS_SEARCH_SHARE * scene->count);
	uint32_t searched = 0;
	bp_status status = BP_OK;
	if (x->neighbours) {
		status = bpi_update_moving(x, scene->count);
		bpi_cross_input in = {.scene = scene, .active = x->active.data, .active_count = x->active_count,
			.active_scene = scene, .margin = half, .moving = true, .filters_kept = changes->bounds_only};
		if (status == BP_OK)
			status = bpi_cross_moving(&x->cross, &in, changes->list, changes->count, most, &searched);
		if (status != BP_OK)
			return status;
	}
	bool again = !x->neighbours || searched > most; // then no fat box changed
	if (again && x->neighbours && !(scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL)) {
		bool paid = x->neighbour_steps >= NEIGHBOURS_PAYS_STEPS;
		uint32_t doubled = x->neighbour_backoff ? 2 * x->neighbour_backoff : BPI_MOVING_WAIT_LEAST;
		x->neighbour_backoff = paid ? 0 : BP_MIN(doubled, BPI_MOVING_WAIT_MOST);
		if (!paid) { // this step is the wait's first
			x->neighbour_wait = x->neighbour_backoff - 1;
			return bpi_full_step(x, scene, false, algorithm, sorted, pairs, stats);
		}
	}
	if (again) {
		if (!bpi_every_active(x, scene, half, true))
			return BP_ERR_OUT_OF_MEMORY;
		x->neighbours = true;
		searched = scene->count;
	}
	stats->ns_build += bpi_now_ns() - t0;
	stats->searched_count = searched;
	stats->path = BP_PATH_NEIGHBOURS;
	x->neighbour_steps = again ? 1 : x->neighbour_steps + 1;
	return bpi_kept_pairs(x, scene, again ? NULL : x->cross.searchers.data, x->cross.searcher_count, moved, pairs,
		stats);
}
