// SPDX-License-Identifier: MIT
// The resting path (incremental_rest.h): the resting and active sets kept up with the changes,
// and the active entities' pairs, with the resting index and among themselves, merged with
// the kept pairs.
#include "incremental/incremental_rest.h"
#include "incremental/incremental_settle.h"
#include "parallel/pairs.h"

#include <string.h>

/// Stale kept pairs are dropped for good once they are more than 1 in this many.
#define REST_STALE_SHARE 8u

/// Notes in `tally` how far entity i of `scene` moved from its record at `at`.
static void sample_rest(const bpi_cells *cells, uint32_t at, const bpi_scene *scene, uint32_t i,
	bpi_margin_tally *tally)
{
	bpi_box3 rested, now = {{0, 0, 0}, {0, 0, 0}};
	bpi_cells_bounds_at(cells, at, rested.lo, rested.hi);
	for (int axis = 0; axis < scene->dims; ++axis) {
		now.lo[axis] = scene->min[axis][i];
		now.hi[axis] = scene->max[axis][i];
	}
	bpi_margin_sample_rest(tally, &rested, &now, scene->dims);
}

/// Index i no longer rests: its record is hidden from the queries and its kept
/// pairs are to go. True when it rested until now. With a `tally` not yet full, its
/// motion from the record is noted first (i still in `scene`).
static inline bool leave_rest(bpi_incremental *x, uint32_t i, const bpi_scene *scene, bpi_margin_tally *tally)
{
	if (i >= x->span || bpi_bit_get(x->gone.data, i))
		return false;
	bpi_bit_set(x->gone.data, i);
	bpi_bit_set(x->left_now.data, i);
	uint32_t at = x->position.data[i];
	bpi_cells *cells = at & BPI_SETTLED_BIT ? &x->settled : bpi_resting_cells(x);
	if (tally && tally->count < BPI_MARGIN_SAMPLES)
		sample_rest(cells, at & ~BPI_SETTLED_BIT, scene, i, tally);
	bpi_cells_hide(cells, at & ~BPI_SETTLED_BIT);
	x->settled_left += (at & BPI_SETTLED_BIT) != 0;
	return true;
}

bp_status bpi_update_sets(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes, int threads,
	bool *left_rest)
{
	const uint32_t n = scene->count;
	const uint32_t kept = BP_MIN(changes->previous_count, (uint32_t)x->is_active.capacity);
	const size_t words = bpi_bit_words(BP_MAX(n, x->span));
	if (!bpi_incremental_cover(x, n) || !bpi_array_reserve(&x->left_now, words) ||
		!bpi_array_grow(&x->is_active, kept, n) ||
		!bpi_array_reserve(&x->joining, changes->count) ||
		!bpi_array_reserve(&x->merged, (size_t)x->active_count + changes->count) ||
		!bpi_cross_reserve(&x->cross, x->active_count + changes->count) ||
		bpi_radix_sort_reserve(&x->radix, changes->count) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	memset(x->left_now.data, 0, words * sizeof *x->left_now.data);
	for (uint32_t i = changes->previous_count; i < n; ++i)
		x->is_active.data[i] = 0; // created since: marked as changed below
	bool left = false;
	for (uint32_t i = n; i < changes->previous_count; ++i)
		left |= leave_rest(x, i, scene, NULL);
	// Until some motion is seen the margin is 0, and fat boxes made so are left at the
	// next step, so every mover would search again: the first to leave rest tell the motion.
	// Only when bounds alone changed: after a create or destroy an index may hold another
	// entity than its record, and the distance between the two is no motion.
	bpi_margin_tally first = {0};
	bool priming = changes->bounds_only && scene->margin == 0 && bpi_margin_value(&x->cross.margin, 0) == 0;
	uint32_t joining = 0;
	for (uint32_t c = 0; c < changes->count; ++c) {
		uint32_t i = changes->list[c];
		if (i >= n)
			continue; // marked, then destroyed from the end
		left |= leave_rest(x, i, scene, priming ? &first : NULL);
		if (!x->is_active.data[i]) {
			x->is_active.data[i] = 1;
			x->joining.data[joining++] = bpi_sort_item_make(i, 0);
		}
	}
	if (priming)
		bpi_margin_observe(&x->cross.margin, &first, 1, 0, false);
	*left_rest = left;
	if (joining == 0 && (x->active_count == 0 || x->active.data[x->active_count - 1] < n))
		return BP_OK; // the same active list: the usual step of a world whose active entities keep changing
	bp_status status = bpi_radix_sort_items(&x->radix, x->joining.data, joining, threads);
	if (status != BP_OK)
		return status;
	// Merge the old list (without indices past n) and the joining ones, both ascending;
	// the fat boxes move with their entities, and joining ones have none yet.
	uint32_t j = 0, out = 0;
	const uint32_t *old = x->active.data;
	bpi_fat *fat = x->cross.fat.data, *next_fat = x->cross.next_fat.data;
	bpi_fat_growth *growth = x->cross.growth.data, *next_growth = x->cross.next_growth.data;
	for (uint32_t k = 0; k < x->active_count; ++k) {
		uint32_t i = old[k];
		if (i >= n)
			continue;
		while (j < joining && bpi_sort_item_key(x->joining.data[j]) < i) {
			next_fat[out] = bpi_fat_none();
			x->merged.data[out++] = bpi_sort_item_key(x->joining.data[j++]);
		}
		next_fat[out] = fat[k];
		next_growth[out] = growth[k];
		x->merged.data[out++] = i;
	}
	while (j < joining) {
		next_fat[out] = bpi_fat_none();
		x->merged.data[out++] = bpi_sort_item_key(x->joining.data[j++]);
	}
	bpi_cross_swap(&x->cross);
	bpi_array_swap(&x->active, &x->merged); // the merged list becomes the active one
	x->active_count = out;
	bpi_active_invalidate(&x->among);
	return BP_OK;
}

/// After a merge that left `stale` kept pairs out (`left`: some entity stopped resting
/// this step): they go for good, in one pass, once they are more than a share of the kept
/// pairs or when no entity left. While entities leave every step, each merge leaves them
/// out again instead, which costs less than writing the kept pairs anew at every step.
/// Stale pairs stay stale: an entity becomes resting again only by a settling or a full
/// step, which both make the kept pairs anew.
static void drop_stale(bpi_incremental *x, size_t stale, bool left)
{
	bpi_pair_buffer *resting = &x->resting_pairs;
	x->rest_stale = stale > 0;
	if (stale == 0 || (left && stale * REST_STALE_SHARE <= resting->count))
		return;
	size_t live = 0;
	for (size_t i = 0; i < resting->count; ++i) {
		bp_pair p = resting->data[i];
		resting->data[live] = p;
		live += !bpi_bit_either(x->gone.data, p.lo, p.hi);
	}
	resting->count = live;
	x->rest_stale = false;
}

bp_status bpi_resting_path(bpi_incremental *x, const bpi_scene *scene, bool left_rest, bool settling,
	bool filters_kept, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	uint64_t t0 = bpi_now_ns();
	const uint32_t m = x->active_count;
	// The active entities' bounds and filters in list order, for both passes.
	bpi_scene sub;
	bp_status status = bpi_subset_scene(x, scene, x->active.data, x->active_count, true, &sub);
	if (status != BP_OK)
		return status;
	uint64_t t1 = bpi_now_ns();

	// active x resting, per fixed chunk of the active list.
	bpi_cross_input in = {
		.scene = scene,
		.cells = bpi_resting_cells(x),
		.settled = x->settled_count ? &x->settled : NULL,
		.settled_of = x->settled_of.data,
		.filter = x->filter.data,
		.gone = x->gone.data,
		.left_now = x->left_now.data,
		.left_rest = left_rest,
		.active = x->active.data,
		.active_count = m,
		.active_scene = &sub,
		.margin = scene->margin,
		.filters_kept = filters_kept,
	};
	uint64_t tests = 0;
	uint32_t searched = 0;
	status = bpi_cross_find(&x->cross, &in, &tests, &searched);

	// active x active, through the fat boxes the searches left.
	bp_frame_stats among_stats = {0};
	if (status == BP_OK)
		status = bpi_pair_chunks_merge(&x->cross.pairs, &x->fresh, scene->threads);
	if (status == BP_OK) {
		// Every fat box new and none left (as after a full step): first searches, not motion past
		// the margins, so few are likely next step, and the pairs of the boxes are kept now.
		bool first = x->cross.escaped == 0 && x->cross.searcher_count == m;
		bpi_active_input among = {.scene = &sub, .fat = x->cross.fat.data, .active = x->active.data, .count = m,
			.now = x->cross.step, .keep = first, .changed = x->cross.searchers.data,
			.changed_count = x->cross.searcher_count};
		status = bpi_active_find(&x->among, &among, &x->fresh, &among_stats);
	}
	if (status != BP_OK)
		return status;
	uint64_t t2 = bpi_now_ns();
	// The active pairs sorted, then merged with the resting pairs. There are none where the
	// resting entities never pair (a static world): the sorted pairs are the step's.
	bpi_pair_buffer *resting = &x->resting_pairs;
	size_t most = resting->count + x->fresh.count;
	if (!bpi_pair_buffer_may_hold(pairs, most) || !bpi_incremental_sort_pairs(x, &x->fresh, scene->threads))
		return BP_ERR_OUT_OF_MEMORY;
	if (resting->count == 0 && !settling) {
		bpi_pair_buffer_hand_over(&x->fresh, pairs);
		pairs->failed = false;
		x->rest_stale = false;
	} else {
		if ((most > pairs->capacity && !bpi_pair_buffer_reserve(pairs, most - pairs->count)) ||
			(settling && !bpi_pair_buffer_reserve(&x->next_pairs, most)) ||
			!bpi_array_reserve(&x->merge_counts, bpi_pairs_merge_chunks(resting->count)))
			return BP_ERR_OUT_OF_MEMORY;
		pairs->failed = false;
		if (settling) {
			pairs->count = bpi_merge_settling(resting, x->gone.data, x->is_active.data, x->fresh.data,
				x->fresh.count, pairs->data, &x->next_pairs);
		} else {
			x->rest_stale |= left_rest;
			pairs->count = bpi_pairs_merge(resting->data, resting->count, x->fresh.data, x->fresh.count,
				x->rest_stale ? x->gone.data : NULL, pairs->data, x->merge_counts.data,
				scene->threads);
			drop_stale(x, most - pairs->count, left_rest);
		}
	}
	uint64_t t3 = bpi_now_ns();

	// Gathering the active entities counts as build, both passes as find, the
	// sort and merge of the active pairs as merge.
	stats->algorithm = BP_ALGO_GRID;
	stats->thread_count = scene->threads;
	stats->candidate_tests += tests + among_stats.candidate_tests;
	stats->entity_count = scene->count;
	stats->active_count = m;
	stats->searched_count = searched;
	stats->path = BP_PATH_RESTING;
	stats->ns_build += t1 - t0;
	stats->ns_find += t2 - t1;
	stats->ns_merge += t3 - t2;
	return BP_OK;
}
