// SPDX-License-Identifier: MIT
// Active x active. Every active entity has a fat box from its last search of the resting
// index (incremental_cross.c), kept while its bounds stay inside it and its filter stays.
// The pairs of active entities whose fat boxes overlap and whose filters accept each other
// are kept as candidates, by position in the active list, and re-tested on the true bounds
// every step. A step drops the candidates of the entities that searched (their boxes are
// new) and finds theirs again by a sweep of their fat boxes over all the fat boxes in x
// order (last step's order, mended by insertion, as only the searchers' boxes moved); when
// the list changed, by the pipeline over all fat boxes. When so many searched that the
// sweep would read more than the pipeline does, the pipeline runs over the true bounds
// and nothing is kept until fewer search.
//
// Why this is exact: two active entities whose bounds overlap lie inside fat boxes that
// overlap. Of the two, take the one that searched last (at that step both boxes were
// the ones they have now): the pairs found for it then included the other, and nothing
// drops a candidate since but a search of one of the two, or a change of the list,
// which finds everything again. Filters are those of the searches (a change of filter
// or kind searches again). Spheres are tested on their shapes at the re-test.
//
// Why not run the pipeline on the active entities every step: that pays a full step over
// them each time, about what a world of the movers alone pays; keeping the pairs is
// faster (perf/README.md, "Incremental: active entities").
#include "incremental_active.h"

#include <math.h>
#include <string.h>

/// The kept pairs are worth keeping while the searchers' sweep is expected to read
/// at most this many rows per active entity; beyond, the pipeline over the true
/// bounds finds every pair and nothing is kept, as it is then faster
/// (perf/README.md, "Incremental: active entities").
#define ACTIVE_SWEEP_ROWS 32.0
/// Fat boxes wider on x than this many times the mean are tested against every
/// searcher rather than swept, so one huge box does not widen every scan.
#define ACTIVE_WIDE_FACTOR 2.0f
/// Moves the insertion pass may make before a radix sort of the keys replaces it.
#define ACTIVE_INSERTION_MOVES(count) (4 * (uint64_t)(count) + 1024)

void bpi_active_free(bpi_active_pairs *ap)
{
	bpi_array_free(&ap->kept);
	bpi_array_free(&ap->order);
	bpi_array_free(&ap->rows);
	bpi_array_free(&ap->wide);
	bpi_array_free(&ap->fat_bounds);
	bpi_array_free(&ap->fat_flags);
	bpi_radix_sort_free(&ap->radix);
	bpi_pair_buffer_free(&ap->found);
	bpi_indexes_free(&ap->indexes);
	*ap = (bpi_active_pairs){0};
}

static bool searched(const bpi_active_input *in, uint32_t k)
{
	return in->fat[k].queried_at == in->now;
}

static bool fats_overlap(const bpi_fat *a, const bpi_fat *b, int dims)
{
	for (int axis = 0; axis < dims; ++axis)
		if (!(a->lo[axis] <= b->hi[axis] && b->lo[axis] <= a->hi[axis]))
			return false;
	return true;
}

static bool keep(bpi_active_pairs *ap, uint32_t a, uint32_t b)
{
	if (ap->kept_count == ap->kept.capacity && !bpi_array_grow(&ap->kept, ap->kept_count, ap->kept_count + 1))
		return false;
	ap->kept.data[ap->kept_count++] = (bp_pair){BP_MIN(a, b), BP_MAX(a, b)};
	return true;
}

// ---- every pair again: the pipeline over the fat boxes -----------------------------------

/// The fat boxes as a scene of their own (positions as indices), spheres read as
/// their boxes: a candidate needs only the boxes to overlap.
static bp_status fat_scene(bpi_active_pairs *ap, const bpi_active_input *in, bpi_scene *out)
{
	const uint32_t n = in->count;
	const int dims = in->scene->dims;
	if (!bpi_array_reserve(&ap->fat_bounds, (size_t)2 * dims * n) || !bpi_array_reserve(&ap->fat_flags, n))
		return BP_ERR_OUT_OF_MEMORY;
	*out = *in->scene;
	for (int axis = 0; axis < dims; ++axis) {
		float *min = ap->fat_bounds.data + (size_t)(2 * axis) * n, *max = min + n;
		for (uint32_t k = 0; k < n; ++k) {
			min[k] = in->fat[k].lo[axis];
			max[k] = in->fat[k].hi[axis];
		}
		out->min[axis] = min;
		out->max[axis] = max;
	}
	for (uint32_t k = 0; k < n; ++k)
		ap->fat_flags.data[k] = in->scene->flags[k] & (uint8_t)~BP_FLAG_SPHERE;
	out->flags = ap->fat_flags.data;
	return BP_OK;
}

static bp_status find_all(bpi_active_pairs *ap, const bpi_active_input *in, bp_frame_stats *stats)
{
	bpi_scene fat;
	bp_status status = fat_scene(ap, in, &fat);
	if (status == BP_OK)
		status = bpi_pipeline_run(&ap->indexes, BP_ALGO_AUTO, &fat, &ap->found, stats);
	if (status != BP_OK)
		return status;
	if (!bpi_array_reserve(&ap->kept, ap->found.count))
		return BP_ERR_OUT_OF_MEMORY;
	if (ap->found.count)
		memcpy(ap->kept.data, ap->found.data, ap->found.count * sizeof(bp_pair));
	ap->kept_count = ap->found.count;
	ap->order_count = 0; // the next sweep sorts afresh
	return BP_OK;
}

/// Too many searched for the kept pairs to pay: the pipeline over the true bounds,
/// its pairs straight into `out`, keeping nothing (the kept pairs stay not valid).
static bp_status find_true(bpi_active_pairs *ap, const bpi_active_input *in, bpi_pair_buffer *out, bp_frame_stats *stats)
{
	bp_status status = bpi_pipeline_run(&ap->indexes, BP_ALGO_AUTO, in->scene, &ap->found, stats);
	if (status != BP_OK)
		return status;
	if (!bpi_pair_buffer_reserve(out, ap->found.count))
		return BP_ERR_OUT_OF_MEMORY;
	for (size_t i = 0; i < ap->found.count; ++i) {
		bp_pair p = ap->found.data[i];
		out->data[out->count++] = (bp_pair){in->active[p.lo], in->active[p.hi]};
	}
	ap->order_count = 0;
	return BP_OK;
}

// ---- the searchers' pairs: a sweep over the fat boxes in x order ----------------------------

/// Whether a box [lo, hi] on x is within the sweep's reach: hi <= fl(lo + reach).
/// Rounded the same way as the sweep's start, so exact for any bounds: a box
/// within reach whose fl(lo + reach) is below a searcher's lo cannot meet it.
static inline bool within_reach(float lo, float hi, float reach)
{
	return hi <= lo + reach;
}

/// The positions by fat lo x into ap->order, and their fat boxes into ap->rows;
/// the boxes not within the sweep's reach into ap->wide. Returns the reach.
static bp_status sort_by_x(bpi_active_pairs *ap, const bpi_active_input *in, float *reach)
{
	const uint32_t n = in->count;
	if (!bpi_array_reserve(&ap->rows, n) || !bpi_array_reserve(&ap->wide, n))
		return BP_ERR_OUT_OF_MEMORY;
	bool reuse = ap->order_count == n;
	if (!reuse && !bpi_array_reserve(&ap->order, n))
		return BP_ERR_OUT_OF_MEMORY;
	bpi_sort_item *items = ap->order.data;
	double width = 0;
	for (uint32_t k = 0; k < n; ++k) {
		uint32_t at = reuse ? bpi_sort_item_index(items[k]) : k;
		items[k] = bpi_sort_item_make(bpi_radix_float_key(in->fat[at].lo[0]), at);
		width += (double)in->fat[at].hi[0] - in->fat[at].lo[0];
	}
	*reach = ACTIVE_WIDE_FACTOR * (float)(width / BP_MAX(n, 1u));
	ap->order_count = n;
	if (!reuse || !bpi_insertion_sort_items(items, n, ACTIVE_INSERTION_MOVES(n))) {
		bp_status status = bpi_radix_sort_items(&ap->radix, items, n, 1);
		if (status != BP_OK) {
			ap->order_count = 0;
			return status;
		}
	}
	uint32_t wide = 0;
	for (uint32_t j = 0; j < n; ++j) {
		uint32_t at = bpi_sort_item_index(items[j]);
		const bpi_fat *f = &in->fat[at];
		bpi_active_row *r = &ap->rows.data[j];
		*r = (bpi_active_row){.at = at};
		for (int axis = 0; axis < in->scene->dims; ++axis) {
			r->rec[axis] = f->lo[axis];
			r->rec[3 + axis] = -f->hi[axis];
		}
		if (!within_reach(f->lo[0], f->hi[0], *reach)) // also a NaN reach
			ap->wide.data[wide++] = at;
	}
	ap->wide_count = wide;
	return BP_OK;
}

/// Other entity k, whose fat box overlaps searcher s's: a pair when the filters
/// accept, once (of two searchers, the lower position finds it).
static void consider(bpi_active_pairs *ap, const bpi_active_input *in, uint32_t s, uint32_t k, bool *failed)
{
	const bpi_scene *o = in->scene;
	if (k != s && !(k < s && searched(in, k)) && (o->unfiltered || bpi_scene_filters_accept(o, s, k)))
		*failed |= !keep(ap, s, k);
}

static bp_status find_searchers(bpi_active_pairs *ap, const bpi_active_input *in, uint32_t searchers)
{
	float reach;
	bp_status status = sort_by_x(ap, in, &reach);
	if (status != BP_OK)
		return status;
	const uint32_t n = in->count;
	// Drop the kept pairs of the searchers.
	size_t live = 0;
	for (size_t i = 0; i < ap->kept_count; ++i) {
		bp_pair p = ap->kept.data[i];
		ap->kept.data[live] = p;
		live += !searched(in, p.lo) && !searched(in, p.hi);
	}
	ap->kept_count = live;
	const bpi_active_row *rows = ap->rows.data;
	const int dims = in->scene->dims;
	bool failed = false;
	uint64_t read = 0;
	for (uint32_t s = 0; s < n && !failed; ++s) {
		if (!searched(in, s))
			continue;
		const bpi_fat *f = &in->fat[s];
		// The first row that may reach lo, by binary search: fl(row lo + reach) is
		// monotone in the row's lo, so the rows it leaves out are a prefix.
		uint32_t first = 0, last = n;
		while (first < last) {
			uint32_t mid = first + (last - first) / 2;
			if (rows[mid].rec[0] + reach < f->lo[0])
				first = mid + 1;
			else
				last = mid;
		}
		float q[6];
		bpi_rec6_query(f->lo, f->hi, dims, q);
		uint32_t j = first;
		for (; j < n && rows[j].rec[0] <= f->hi[0]; ++j)
			if (bpi_rec6_overlap(rows[j].rec, q) && within_reach(rows[j].rec[0], -rows[j].rec[3], reach))
				consider(ap, in, s, rows[j].at, &failed);
		read += j - first + ap->wide_count;
		for (uint32_t w = 0; w < ap->wide_count; ++w)
			if (fats_overlap(f, &in->fat[ap->wide.data[w]], dims))
				consider(ap, in, s, ap->wide.data[w], &failed);
	}
	float measured = (float)read / (float)BP_MAX(searchers, 1u);
	ap->rows_per_search = ap->rows_per_search > 0 ? 0.75f * ap->rows_per_search + 0.25f * measured : measured;
	return failed ? BP_ERR_OUT_OF_MEMORY : BP_OK;
}

/// Rows a searcher's sweep is expected to read: as measured, or before any sweep
/// as if the boxes were spread evenly over their span on x.
static double expected_rows(const bpi_active_pairs *ap, const bpi_active_input *in)
{
	if (ap->rows_per_search > 0)
		return ap->rows_per_search;
	const uint32_t n = in->count;
	double width = 0, lo = INFINITY, hi = -INFINITY;
	for (uint32_t k = 0; k < n; ++k) {
		width += (double)in->fat[k].hi[0] - in->fat[k].lo[0];
		lo = fmin(lo, in->fat[k].lo[0]);
		hi = fmax(hi, in->fat[k].lo[0]);
	}
	double span = hi - lo, reach = (1.0 + ACTIVE_WIDE_FACTOR) * width / BP_MAX(n, 1u);
	return span > reach ? n * reach / span : n;
}

// ---- the step -------------------------------------------------------------------------

bp_status bpi_active_find(bpi_active_pairs *ap, const bpi_active_input *in, bpi_pair_buffer *out, bp_frame_stats *stats)
{
	const uint32_t n = in->count;
	uint32_t searchers = 0;
	for (uint32_t k = 0; k < n; ++k)
		searchers += searched(in, k);
	const bool few = searchers * expected_rows(ap, in) <= ACTIVE_SWEEP_ROWS * n;
	const bool sweep = ap->valid && few;
	ap->valid = false; // until the kept pairs are whole again
	if (!few)
		return find_true(ap, in, out, stats);
	bp_status status = sweep ? find_searchers(ap, in, searchers) : find_all(ap, in, stats);
	if (status != BP_OK)
		return status;
	ap->valid = true;
	if (!bpi_pair_buffer_reserve(out, ap->kept_count))
		return BP_ERR_OUT_OF_MEMORY;
	const bpi_scene *s = in->scene;
	for (size_t i = 0; i < ap->kept_count; ++i) {
		bp_pair p = ap->kept.data[i];
		bool hit = bpi_scene_overlap(s, p.lo, p.hi) && bpi_scene_shapes_accept(s, p.lo, p.hi);
		out->data[out->count] = (bp_pair){in->active[p.lo], in->active[p.hi]};
		out->count += hit;
	}
	stats->candidate_tests += ap->kept_count;
	return BP_OK;
}
