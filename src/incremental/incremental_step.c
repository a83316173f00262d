// SPDX-License-Identifier: MIT
// Incremental steps (incremental.h): a step's entry, and the choice of its path.
//
// A full step runs the grid over every entity and keeps two things: its cells, as the
// resting index, and its pairs, sorted. Later steps split the entities in two:
// resting ones, unchanged since that build, and active ones, changed since. The pairs are
//   resting x resting  the kept pairs, minus those of entities that stopped resting;
//   active x active    the pairs of their fat boxes, kept while neither searches
//                      (incremental_active.c);
//   active x resting   one query of the resting index per active entity;
// each pair in exactly one of the three, merged into one list sorted by (lo, hi).
//
// Where each part lives: the state and what its paths share, incremental_state.c; the full
// path, incremental_full.c; the resting and active sets and the resting path, incremental_rest.c;
// settling into a second resting level, incremental_settle.c; the moving state,
// incremental_moving.c; the neighbour list, incremental_neighbours.c; the cost model that
// chooses between them, incremental_model.c.
//
// Why this is exact: a resting entity's bounds, filter, kind and shape are those the
// index holds (any change makes it active), so its kept pairs with other resting entities
// still hold, and a query of the index with an active entity's current bounds sees the
// resting entity exactly as it is now. The dense numbering is the world's: an index that
// did not change and is below the entity count holds the same entity as at the build (a
// destroy marks the entity it moves, a create marks the new one).
//
// A step costs far less than a rebuild. What it pays beyond a world of the active entities alone is
// the cache misses of querying a big resting index: the fat boxes keep those queries few, and
// prefetching overlaps their misses (perf/README.md, "Incremental path").
#include "incremental/incremental.h"
#include "incremental/incremental_full.h"
#include "incremental/incremental_model.h"
#include "incremental/incremental_moving.h"
#include "incremental/incremental_neighbours.h"
#include "incremental/incremental_rest.h"
#include "incremental/incremental_settle.h"

bp_status bpi_incremental_step(bpi_incremental **state, const bpi_scene *scene, const bpi_changes *changes,
	bp_algorithm algorithm, bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	if (!*state) {
		*state = bpi_alloc(sizeof **state);
		if (!*state)
			return BP_ERR_OUT_OF_MEMORY;
		**state = (bpi_incremental){.moving_wait = BPI_MOVING_WAIT_LEAST};
	}
	bpi_incremental *x = *state;
	uint64_t t0 = bpi_now_ns();
	bp_status status = BP_OK;
	// Only this step's changes lie between its bounds and those packed by the last.
	const bpi_changes *moved = x->kept_last && !changes->all ? changes : NULL;
	x->kept_last = false;
	bool forced_full = scene->debug_flags & BP_DEBUG_ALWAYS_FULL;
	bool forced_incremental = scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL;
	if (scene->skin > 0 && !changes->all && !forced_full) {
		status = bpi_neighbour_path(x, scene, changes, moved, algorithm, sorted, pairs, stats);
		if (status != BP_OK) {
			x->neighbours = false;
			return status;
		}
		x->moving_pairs = pairs->count;
		stats->pair_count = pairs->count;
		return BP_OK;
	}
	bool moving = bpi_stays_moving(x, scene, changes) || bpi_enters_moving(x, scene, changes);
	bool usable = x->resting_valid && !changes->all;
	// The cheaper path by the model, judged before any work.
	bool worth = bpi_worth_resting(x, scene, changes, usable);
	bool incremental = moving || (usable && worth && (!x->settled_full || forced_incremental));
	bool left_rest = false;
	if (moving)
		status = bpi_update_moving(x, scene->count);
	else if (incremental)
		status = bpi_update_sets(x, scene, changes, scene->threads, &left_rest);
	uint64_t ns_sets = bpi_now_ns() - t0;
	// A full step keeps a resting index when the next step is likely to use it.
	bool keep = worth || forced_full || !x->stepped;
	bool gave_up = false;
	if (status == BP_OK && moving)
		status = bpi_moving_path(x, scene, changes, moved, pairs, stats, &gave_up);
	if (gave_up) {
		bpi_leave_moving(x);
		moving = incremental = false;
	}
	uint32_t settling = 0; // members of the settled grid this step builds, if any
	if (status == BP_OK && !moving && incremental) {
		uint64_t t1 = bpi_now_ns();
		settling = bpi_prepare_settling(x, scene, changes);
		stats->ns_build += bpi_now_ns() - t1;
	}
	if (status == BP_OK && !moving)
		status = incremental
				 ? bpi_resting_path(x, scene, left_rest, settling > 0, changes->bounds_only, pairs, stats)
				 : bpi_full_step(x, scene, keep, algorithm, sorted, pairs, stats);
	if (status != BP_OK) {
		x->resting_valid = x->moving = x->entering = false; // the sets may be half updated: start over
		return status;
	}
	x->stepped = true;
	if (moving) {
		// Blended: searches come in waves, as fat boxes made in one step are left
		// in another.
		double work = bpi_moving_work(x, stats->searched_count);
		x->moving_work = x->moving_steps > 1 ? 0.75 * x->moving_work + 0.25 * work : work;
		x->moving_steps++;
	} else if (settling) {
		bpi_commit_settled(x, scene, settling);
	} else if (bpi_moving_always() && !forced_full) {
		bpi_begin_entry(x, scene);
	} else if (!keep) { // most entities change: moving may pay, once the wait is over
		if (x->moving_wait > 0)
			x->moving_wait--;
		else
			bpi_begin_entry(x, scene);
	}
	x->moving_pairs = pairs->count;
	stats->ns_build += ns_sets;
	stats->pair_count = pairs->count;
	return BP_OK;
}
