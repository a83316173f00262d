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
// them each time, about what a world of the active entities alone pays; keeping the pairs is
// faster (perf/README.md, "Incremental: active entities").
#include "incremental/incremental_active.h"
#include "parallel/parallel.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

/// The kept pairs are worth keeping while the searchers' sweep is expected to read
/// at most this many rows per active entity; beyond, the pipeline over the true
/// bounds finds every pair and nothing is kept, as it is then faster
/// (perf/README.md, "Incremental: active entities").
#define ACTIVE_SWEEP_ROWS 32.0
/// When the caller keeps the pairs either way, the pipeline runs over the fat boxes,
/// which costs this many times more.
#define ACTIVE_SWEEP_ROWS_KEPT 96.0
/// Fat boxes wider on x than this many times the mean are tested against every
/// searcher rather than swept, so one huge box does not widen every scan.
#define ACTIVE_WIDE_FACTOR 2.0f
/// Moves the insertion pass may make before a radix sort of the keys replaces it.
#define ACTIVE_INSERTION_MOVES(count) (4 * (uint64_t)(count) + 1024)
/// The columns are laid out again once the extra list's own layouts, and the searchers'
/// passes over its rows too wide for them, have read this many rows per active entity
/// since: laying the columns out reads every box.
#define ACTIVE_EXTRA_READS 1
/// Layouts that merge the extra list into the columns on their bands, between two that
/// plan the bands anew from every box: a merge reads each row once, a full layout
/// sorts and passes over every box several times, but its bands follow the boxes.
#define ACTIVE_MERGES_MOST 8
/// Searchers per chunk of the sweep (a fixed cut: their pairs join in chunk order).
#define SWEEP_GRAIN 64
/// Positions per chunk of a layout's rows and sort keys.
#define ROWS_GRAIN 8192u

static _Atomic uint32_t merges_most = ACTIVE_MERGES_MOST;

void bpi_set_active_merges_most(uint32_t count) { atomic_store(&merges_most, count); }

void bpi_active_free(bpi_active_pairs *ap)
{
	bpi_array_free(&ap->kept);
	bpi_array_free(&ap->order);
	bpi_columns_free(&ap->columns);
	bpi_columns_free(&ap->coarse);
	bpi_array_free(&ap->wide_items);
	bpi_array_free(&ap->rows_by_position);
	bpi_array_free(&ap->wide_rows);
	bpi_array_free(&ap->boxes);
	bpi_array_free(&ap->written);
	bpi_array_free(&ap->searched);
	bpi_array_free(&ap->spare);
	bpi_array_free(&ap->extra);
	bpi_array_free(&ap->in_extra);
	bpi_array_free(&ap->stale);
	bpi_columns_free(&ap->extra_columns);
	bpi_array_free(&ap->extra_wide);
	bpi_array_free(&ap->fat_bounds);
	bpi_array_free(&ap->fat_flags);
	bpi_radix_sort_free(&ap->radix);
	bpi_pair_buffer_free(&ap->found);
	bpi_pair_chunks_free(&ap->swept);
	bpi_array_free(&ap->merge_counts);
	bpi_array_free(&ap->searcher_list);
	bpi_array_free(&ap->sweep_order);
	bpi_indexes_free(&ap->indexes);
	*ap = (bpi_active_pairs){0};
}

static bool searched(const bpi_active_pairs *ap, uint32_t k)
{
	return ap->searched.data[k];
}

void bpi_active_truncate(bpi_active_pairs *ap, uint32_t count)
{
	size_t live = 0;
	for (size_t i = 0; i < ap->kept_count; ++i) {
		ap->kept.data[live] = ap->kept.data[i];
		live += ap->kept.data[i].hi < count; // lo < hi
	}
	ap->kept_count = live;
	ap->order_count = 0; // the next sweep sorts afresh
	ap->columns_current = false;
}

static bool fats_overlap(const bpi_fat *a, const bpi_fat *b, int dims)
{
	for (int axis = 0; axis < dims; ++axis)
		if (!(a->lo[axis] <= b->hi[axis] && b->lo[axis] <= a->hi[axis]))
			return false;
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

static bpi_indexes *pipeline_indexes(bpi_active_pairs *ap, const bpi_active_input *in)
{
	return in->spare ? in->spare : &ap->indexes;
}

static bp_status find_all(bpi_active_pairs *ap, const bpi_active_input *in, bp_frame_stats *stats)
{
	bpi_scene fat;
	bp_status status = fat_scene(ap, in, &fat);
	if (status == BP_OK)
		status = bpi_pipeline_run(pipeline_indexes(ap, in), BP_ALGO_AUTO, &fat, &ap->found, stats);
	if (status != BP_OK)
		return status;
	if (!bpi_array_reserve(&ap->kept, ap->found.count))
		return BP_ERR_OUT_OF_MEMORY;
	if (ap->found.count)
		memcpy(ap->kept.data, ap->found.data, ap->found.count * sizeof(bp_pair));
	ap->kept_count = ap->found.count;
	ap->order_count = 0; // the next sweep sorts afresh
	ap->columns_current = false;
	ap->first_layout = true;
	ap->sorted = false;
	if (in->keep) {
		if (!bpi_array_reserve(&ap->spare, ap->kept_count) ||
			!bpi_pairs_sort_canonical(ap->kept.data, ap->kept_count, ap->spare.data, in->scene->threads))
			return BP_ERR_OUT_OF_MEMORY;
		ap->sorted = true;
	}
	return BP_OK;
}

/// The kept pairs from `from` on, found this step, sorted and merged into those
/// before, which are sorted: one pass instead of sorting them all.
static bool merge_found(bpi_active_pairs *ap, size_t from, int threads)
{
	size_t fresh = ap->kept_count - from;
	if (!bpi_array_reserve(&ap->spare, ap->kept_count) ||
		!bpi_array_reserve(&ap->merge_counts, bpi_pairs_merge_chunks(from)))
		return false;
	if (!bpi_pairs_sort_canonical(ap->kept.data + from, fresh, ap->spare.data, threads))
		return false;
	bpi_pairs_merge(ap->kept.data, from, ap->kept.data + from, fresh, NULL, ap->spare.data, ap->merge_counts.data,
		threads);
	bpi_array_swap(&ap->kept, &ap->spare);
	return true;
}

/// Too many searched for the kept pairs to pay: the pipeline over the true bounds,
/// its pairs straight into `out`, keeping nothing (the kept pairs stay not valid).
static bp_status find_true(bpi_active_pairs *ap, const bpi_active_input *in, bpi_pair_buffer *out,
	bp_frame_stats *stats)
{
	bp_status status = bpi_pipeline_run(pipeline_indexes(ap, in), BP_ALGO_AUTO, in->scene, &ap->found, stats);
	if (status != BP_OK)
		return status;
	if (!bpi_pair_buffer_reserve(out, ap->found.count))
		return BP_ERR_OUT_OF_MEMORY;
	for (size_t i = 0; i < ap->found.count; ++i) {
		bp_pair p = ap->found.data[i];
		out->data[out->count++] = (bp_pair){in->active[p.lo], in->active[p.hi]};
	}
	ap->order_count = 0;
	ap->columns_current = false;
	return BP_OK;
}

// ---- the searchers' pairs: a sweep over the fat boxes in columns ----------------------------

typedef struct rows_job {
	const bpi_active_input *in;
	bpi_active_row *rows;
	bpi_sort_item *items;
	bool reuse; ///< items hold last step's order
} rows_job;

static void rows_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const rows_job *job = ctx;
	for (uint32_t k = begin; k < end; ++k)
		job->rows[k] = bpi_columns_row(&job->in->fat[k], k, job->in->scene->dims);
}

/// Each item keyed by its row's lo x: item k names position k, or when reused the
/// position it named.
static void keys_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const rows_job *job = ctx;
	for (uint32_t k = begin; k < end; ++k) {
		uint32_t at = job->reuse ? bpi_sort_item_index(job->items[k]) : k;
		job->items[k] = bpi_sort_item_make(bpi_radix_float_key(job->rows[at].rec[0]), at);
	}
}

/// The positions by fat lo x into ap->order, mended from last step's order, and the
/// fat boxes in columns. The fat boxes are read once, in position order, into rows:
/// the sort and the columns then read those, a third of a fat box each, where reading
/// the fat boxes in x order missed the cache on every one.
static bp_status sort_by_x(bpi_active_pairs *ap, const bpi_active_input *in)
{
	const uint32_t n = in->count;
	const int dims = in->scene->dims;
	bool reuse = ap->order_count == n;
	if ((!reuse && !bpi_array_reserve(&ap->order, n)) || !bpi_array_reserve(&ap->rows_by_position, n))
		return BP_ERR_OUT_OF_MEMORY;
	const int threads = in->scene->threads;
	bpi_active_row *rows = ap->rows_by_position.data;
	bpi_sort_item *items = ap->order.data;
	rows_job job = {in, rows, items, reuse};
	bpi_parallel_for(n, ROWS_GRAIN, threads, rows_chunk, &job);
	bpi_parallel_for(n, ROWS_GRAIN, threads, keys_chunk, &job);
	ap->order_count = n;
	bp_status status = BP_OK;
	if (!reuse || !bpi_insertion_sort_items(items, n, ACTIVE_INSERTION_MOVES(n))) {
		status = bpi_radix_sort_items(&ap->radix, items, n, threads);
		if (status != BP_OK) {
			ap->order_count = 0;
			ap->columns_current = false;
			return status;
		}
	}
	status = bpi_columns_build(&ap->columns, items, n, rows, dims, threads);
	// The boxes too wide for the columns (large ones, or fast ones with wide fat
	// boxes among still ones) in coarser columns of their own.
	const uint32_t wide = ap->columns.wide_count;
	if (status != BP_OK || !bpi_array_reserve(&ap->wide_items, wide))
		return status != BP_OK ? status : BP_ERR_OUT_OF_MEMORY;
	for (uint32_t w = 0; w < wide; ++w)
		ap->wide_items.data[w] = bpi_sort_item_make(0, ap->columns.wide.data[w]);
	return bpi_columns_build(&ap->coarse, ap->wide_items.data, wide, rows, dims, threads);
}

/// Other entity k, whose fat box overlaps searcher s's: a pair when the filters
/// accept, once (of two searchers, the lower position finds it).
static void consider(const bpi_active_pairs *ap, const bpi_active_input *in, uint32_t s, uint32_t k,
	bpi_pair_buffer *out)
{
	const bpi_scene *o = in->scene;
	if (k != s && !(k < s && searched(ap, k)) && (o->unfiltered || bpi_scene_filters_accept(o, s, k)))
		bpi_pair_push(out, s, k);
}

/// The extra list merged into the columns, and those too wide for them into the coarse
/// columns: every box is in them as it is now.
static bp_status merge_extra(bpi_active_pairs *ap, const bpi_active_input *in)
{
	const int dims = in->scene->dims;
	const uint64_t *stale = ap->stale.data;
	uint32_t wide = 0;
	if (!bpi_array_reserve(&ap->wide_rows, BP_MAX(ap->extra_count, 1u)))
		return BP_ERR_OUT_OF_MEMORY;
	bp_status status = bpi_columns_merge(&ap->columns, stale, ap->extra.data, ap->extra_count, dims, &ap->radix,
		ap->wide_rows.data, &wide);
	if (status == BP_OK)
		status = bpi_columns_merge(&ap->coarse, stale, ap->wide_rows.data, wide, dims, &ap->radix, NULL, NULL);
	if (status != BP_OK) {
		ap->columns_current = false; // the stale rows may be gone: the next call builds
		return status;
	}
	for (uint32_t e = 0; e < ap->extra_count; ++e) {
		const uint32_t at = ap->extra.data[e].at;
		ap->in_extra.data[at] = 0;
		bpi_bit_clear(ap->stale.data, at);
	}
	ap->extra_count = ap->extra_wide_count = 0;
	ap->extra_reads = 0;
	ap->merges++;
	ap->laid_out = true;
	return BP_OK;
}

/// The columns, laid out again when they are not current or the extra list has
/// been read enough, counting what this step would read of it: a layout of every row
/// it would hold, this step's `searchers` among them, and each searcher's pass over its
/// wide rows. Otherwise the extra list lists this step's searchers not in it yet, whose
/// rows in the columns are out of date, and is laid out on the columns' bands.
static bp_status plan_columns(bpi_active_pairs *ap, const bpi_active_input *in, uint32_t searchers)
{
	const uint32_t n = in->count, words = (uint32_t)bpi_bit_words(n);
	if (!bpi_array_grow(&ap->extra, ap->columns_current ? ap->extra_count : 0, n) ||
		!bpi_array_grow(&ap->in_extra, ap->columns_current ? n : 0, n) || !bpi_array_reserve(&ap->extra_wide, n) ||
		!bpi_array_grow(&ap->stale, ap->columns_current ? words : 0, words))
		return BP_ERR_OUT_OF_MEMORY;
	const uint64_t reads = ap->extra_reads + ap->extra_count + searchers + (uint64_t)searchers * ap->extra_wide_count;
	const bool lay_out = !ap->columns_current || reads > ACTIVE_EXTRA_READS * (uint64_t)n;
	if (lay_out && (!ap->columns_current || ap->merges >= atomic_load_explicit(&merges_most, memory_order_relaxed))) {
		bp_status status = sort_by_x(ap, in);
		if (status != BP_OK)
			return status;
		memset(ap->in_extra.data, 0, (size_t)n * sizeof *ap->in_extra.data);
		memset(ap->stale.data, 0, (size_t)words * sizeof *ap->stale.data);
		ap->extra_count = ap->extra_wide_count = 0;
		ap->extra_reads = 0;
		ap->merges = 0;
		// A first layout is the due of the step that found every pair, which the model
		// priced; any other (for the reads, or as the list lost positions) is this one's.
		ap->laid_out = !ap->first_layout;
		ap->first_layout = false;
		ap->columns_current = true;
		return BP_OK; // every box is in the columns as it is now
	}
	for (uint32_t i = 0; i < searchers; ++i) {
		uint32_t k = ap->searcher_list.data[i];
		if (!ap->in_extra.data[k]) {
			ap->in_extra.data[k] = ++ap->extra_count;
			bpi_bit_set(ap->stale.data, k);
		}
		ap->extra.data[ap->in_extra.data[k] - 1] = bpi_columns_row(&in->fat[k], k, in->scene->dims);
	}
	if (lay_out)
		return merge_extra(ap, in);
	bp_status status = bpi_columns_place(&ap->extra_columns, &ap->columns, ap->extra.data, ap->extra_count,
		in->scene->dims, &ap->radix, ap->extra_wide.data, &ap->extra_wide_count);
	ap->extra_reads += ap->extra_count + (uint64_t)searchers * ap->extra_wide_count;
	ap->extra_laid = ap->extra_count;
	return status;
}

/// The rows of the columns of `c` that searcher s's fat box `f` (query `q`) reaches,
/// but those of positions marked in `stale` (NULL: none), its pairs considered.
/// Returns the rows read.
static uint64_t sweep_columns(const bpi_active_pairs *ap, const bpi_columns *c, const uint64_t *stale,
	const bpi_active_input *in, uint32_t s, const float q[6], bpi_pair_buffer *out)
{
	const bpi_active_row *rows = c->rows.data;
	const bpi_fat *f = &in->fat[s];
	uint32_t first[3], last[3];
	bpi_columns_reach(c, f->lo, f->hi, first, last);
	uint64_t read = 0;
	for (uint32_t y = first[1]; y <= last[1]; ++y)
		for (uint32_t z = first[2]; z <= last[2]; ++z) {
			uint32_t j, end;
			bpi_columns_rows(c, y, z, f->lo[0], &j, &end);
			uint32_t from = j;
			for (; j < end && rows[j].rec[0] <= f->hi[0]; ++j)
				if (bpi_rec6_overlap(rows[j].rec, q) && !(stale && bpi_bit_get(stale, rows[j].at)))
					consider(ap, in, s, rows[j].at, out);
			read += j - from + 1;
		}
	return read;
}

/// Searcher s against every other fat box once: the current rows of the columns and
/// of the coarse columns it reaches, the boxes too wide for both, and the extra list.
static uint64_t sweep_one(const bpi_active_pairs *ap, const bpi_active_input *in, uint32_t s, bpi_pair_buffer *out)
{
	const bpi_columns *c = &ap->coarse;
	const uint64_t *stale = ap->stale.data;
	const int dims = in->scene->dims;
	const bpi_fat *f = &in->fat[s];
	float q[6];
	bpi_rec6_query(f->lo, f->hi, dims, q);
	uint64_t read = sweep_columns(ap, &ap->columns, stale, in, s, q, out) +
			sweep_columns(ap, c, stale, in, s, q, out) + c->wide_count + ap->extra_wide_count;
	for (uint32_t w = 0; w < c->wide_count; ++w) {
		uint32_t k = c->wide.data[w];
		if (!bpi_bit_get(stale, k) && fats_overlap(f, &in->fat[k], dims))
			consider(ap, in, s, k, out);
	}
	if (ap->extra_count)
		read += sweep_columns(ap, &ap->extra_columns, NULL, in, s, q, out);
	for (uint32_t e = 0; e < ap->extra_wide_count; ++e)
		if (bpi_rec6_overlap(ap->extra_wide.data[e].rec, q))
			consider(ap, in, s, ap->extra_wide.data[e].at, out);
	return read;
}

typedef struct sweep_job {
	const bpi_active_pairs *ap;
	const bpi_active_input *in;
} sweep_job;

/// The searchers of one chunk of the list, their pairs and rows read into the chunk's buffer.
static void sweep_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sweep_job *job = ctx;
	const bpi_active_pairs *ap = job->ap;
	bpi_pair_buffer *out = &ap->swept.buffers[chunk];
	for (uint32_t i = begin; i < end && !bpi_pair_buffer_stopped(out); ++i)
		out->tests += sweep_one(ap, job->in, ap->searcher_list.data[i], out);
}

/// The searchers in the order of the first column their fat boxes reach, by position
/// within one. Consecutive sweeps then read the same columns from cache, where in
/// position order each reads columns anywhere in the layout, a miss per binary search
/// (perf/README.md, "Incremental: moving worlds"). Which searcher finds a pair does not
/// depend on this order (consider), and the order is the same on any thread count.
static bp_status order_by_column(bpi_active_pairs *ap, const bpi_active_input *in, uint32_t searchers)
{
	if (!bpi_array_reserve(&ap->sweep_order, searchers))
		return BP_ERR_OUT_OF_MEMORY;
	const bpi_columns *c = &ap->columns;
	uint32_t *list = ap->searcher_list.data;
	bpi_sort_item *items = ap->sweep_order.data;
	for (uint32_t i = 0; i < searchers; ++i) {
		uint32_t first[3], last[3];
		bpi_columns_reach(c, in->fat[list[i]].lo, in->fat[list[i]].hi, first, last);
		items[i] = bpi_sort_item_make(first[1] * c->bands[2] + first[2], list[i]);
	}
	bp_status status = bpi_radix_sort_items(&ap->radix, items, searchers, in->scene->threads);
	if (status != BP_OK)
		return status;
	for (uint32_t i = 0; i < searchers; ++i)
		list[i] = bpi_sort_item_index(items[i]);
	return BP_OK;
}

static bp_status find_searchers(bpi_active_pairs *ap, const bpi_active_input *in, uint32_t searchers)
{
	if (searchers == 0)
		return BP_OK; // every kept pair stands
	bp_status status = plan_columns(ap, in, searchers);
	if (status == BP_OK)
		status = order_by_column(ap, in, searchers);
	if (status != BP_OK)
		return status;
	// Drop the kept pairs of the searchers.
	size_t live = 0;
	for (size_t i = 0; i < ap->kept_count; ++i) {
		bp_pair p = ap->kept.data[i];
		ap->kept.data[live] = p;
		live += !searched(ap, p.lo) && !searched(ap, p.hi);
	}
	ap->kept_count = live;
	// The searchers, in column order, swept in fixed chunks on the step's threads.
	const uint32_t chunks = bpi_chunk_count(searchers, SWEEP_GRAIN);
	ap->swept.budget = in->scene->budget;
	status = bpi_pair_chunks_reset(&ap->swept, chunks);
	if (status != BP_OK)
		return status;
	sweep_job job = {ap, in};
	bpi_parallel_for(searchers, SWEEP_GRAIN, in->scene->threads, sweep_chunk, &job);
	uint64_t read = 0;
	size_t found = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		if (ap->swept.buffers[c].failed)
			return BP_ERR_OUT_OF_MEMORY;
		read += ap->swept.buffers[c].tests;
		found += ap->swept.buffers[c].count;
	}
	if (!bpi_array_grow(&ap->kept, live, live + found))
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t c = 0; c < chunks; ++c) { // in chunk order: the same list for any thread count
		const bpi_pair_buffer *b = &ap->swept.buffers[c];
		if (b->count)
			memcpy(ap->kept.data + ap->kept_count, b->data, b->count * sizeof *b->data);
		ap->kept_count += b->count;
	}
	if (ap->sorted && !merge_found(ap, live, in->scene->threads))
		return BP_ERR_OUT_OF_MEMORY;
	ap->rows_read = read;
	float measured = (float)read / (float)BP_MAX(searchers, 1u);
	ap->rows_per_search = ap->rows_per_search > 0 ? 0.75f * ap->rows_per_search + 0.25f * measured : measured;
	return BP_OK;
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

/// Units of kept pairs and chunks of units for the re-test, and entities per chunk of
/// the packing: fixed cuts, so the pairs close up in chunk order, the kept order, for
/// any thread count.
#define RETEST_UNIT 1024u
#define RETEST_GRAIN 16u
#define PACK_GRAIN 16384u
/// Kept pairs ahead whose second box is fetched, in worlds of at least RETEST_FAR entities
/// (8 MiB of packed boxes): the kept order is by lo, so hi lands anywhere in the boxes, and
/// more misses overlap than the core finds on its own. In smaller worlds the boxes stay in
/// cache and the fetches only cost (perf/README.md, "Incremental: moving worlds").
#define RETEST_AHEAD 32u
#define RETEST_FAR (1u << 18)

typedef struct retest_job {
	const bpi_active_pairs *ap;
	const bpi_active_input *in;
	bp_pair *out;     ///< the pairs of kept pair i are written from out + i on
	size_t *written;  ///< per chunk
	uint32_t from;    ///< positions from here on are packed, whether listed as moved or not
} retest_job;

static void pack_one(bpi_box4 *boxes, const bpi_scene *s, uint32_t k)
{
	boxes[k] = (bpi_box4){{0, 0, 0, 0}, {0, 0, 0, 0}};
	for (int axis = 0; axis < s->dims; ++axis) {
		boxes[k].lo[axis] = s->min[axis][k];
		boxes[k].hi[axis] = s->max[axis][k];
	}
}

/// Positions from `from` on.
static void pack_tail_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const retest_job *job = ctx;
	for (uint32_t k = job->from + begin; k < job->from + end; ++k)
		pack_one(job->ap->boxes.data, job->in->scene, k);
}

/// The positions listed as moved.
static void pack_moved_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const retest_job *job = ctx;
	const bpi_active_input *in = job->in;
	for (uint32_t c = begin; c < end; ++c)
		if (in->moved[c] < in->count)
			pack_one(job->ap->boxes.data, in->scene, in->moved[c]);
}

static void retest_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const retest_job *job = ctx;
	const bpi_active_pairs *ap = job->ap;
	const bpi_scene *s = job->in->scene;
	const uint32_t *active = job->in->active;
	const bpi_box4 *boxes = ap->boxes.data;
	const bool shapes = !s->unfiltered;
	const size_t first = (size_t)begin * RETEST_UNIT, last = BP_MIN((size_t)end * RETEST_UNIT, ap->kept_count);
	bp_pair *to = job->out + first;
	const uint32_t count = job->in->count;
	const size_t fetch_end = count >= RETEST_FAR ? last : first;
	// Ascending dense indices, the last count - 1: every entity active, each its own position
	// (the moving state), so no pair is renamed and the list is not read at random.
	const bool renamed = count && active[count - 1] != count - 1;
	size_t n = 0;
	for (size_t i = first; i < last; ++i) {
		if (i + RETEST_AHEAD < fetch_end) {
			const uint32_t ahead = ap->kept.data[i + RETEST_AHEAD].hi;
			__builtin_prefetch(&boxes[ahead]);
			if (renamed)
				__builtin_prefetch(&active[ahead]);
		}
		bp_pair p = ap->kept.data[i];
		bool hit = bpi_box4_overlap(&boxes[p.lo], &boxes[p.hi]);
		if (shapes && hit)
			hit = bpi_scene_shapes_accept(s, p.lo, p.hi);
		to[n] = renamed ? (bp_pair){active[p.lo], active[p.hi]} : p;
		n += hit;
	}
	job->written[chunk] = n;
}

/// The true bounds packed by position: of the first `kept`, packed by the last call,
/// those listed as moved; all the others.
static void pack(const bpi_active_input *in, uint32_t kept, retest_job *job)
{
	const int threads = in->scene->threads;
	job->from = kept;
	bpi_parallel_for(in->count - kept, PACK_GRAIN, threads, pack_tail_chunk, job);
	if (kept)
		bpi_parallel_for(in->moved_count, PACK_GRAIN, threads, pack_moved_chunk, job);
}

/// The kept pairs whose true bounds overlap (and shapes, for spheres) into `out`, in
/// the kept order. The bounds are packed by position first: the test is then two
/// loads per entity and no branch, where most candidates fail.
static bp_status retest(bpi_active_pairs *ap, const bpi_active_input *in, uint32_t packed, bpi_pair_buffer *out,
	bp_frame_stats *stats)
{
	const int threads = in->scene->threads;
	const uint32_t units = (uint32_t)((ap->kept_count + RETEST_UNIT - 1) / RETEST_UNIT);
	const uint32_t chunks = bpi_chunk_count(units, RETEST_GRAIN);
	const uint32_t kept = in->moved ? BP_MIN(packed, in->count) : 0;
	if (!bpi_pair_buffer_reserve(out, ap->kept_count) || !bpi_array_grow(&ap->boxes, kept, in->count) ||
		!bpi_array_reserve(&ap->written, chunks))
		return BP_ERR_OUT_OF_MEMORY;
	// out->data is NULL while nothing was ever kept (no offset may be added to it).
	retest_job job = {ap, in, out->data ? out->data + out->count : NULL, ap->written.data, 0};
	pack(in, kept, &job);
	ap->boxes_count = in->count;
	bpi_parallel_for(units, RETEST_GRAIN, threads, retest_chunk, &job);
	for (uint32_t c = 0; c < chunks; ++c) {
		size_t first = (size_t)c * RETEST_GRAIN * RETEST_UNIT;
		memmove(out->data + out->count, job.out + first, job.written[c] * sizeof(bp_pair));
		out->count += job.written[c];
	}
	stats->candidate_tests += ap->kept_count;
	return BP_OK;
}

/// Marks this step's searchers in ap->searched and lists them in position order in
/// ap->searcher_list: from `changed` when it lists them in that order (as the moving
/// check does), else by a pass over every position. Returns their count, UINT32_MAX
/// when memory runs out.
static uint32_t list_searchers(bpi_active_pairs *ap, const bpi_active_input *in)
{
	const uint32_t n = in->count;
	if (!bpi_array_reserve(&ap->searched, n) ||
		!bpi_array_reserve(&ap->searcher_list, BP_MAX(in->changed ? BP_MIN(in->changed_count, n) : n, 1u)))
		return UINT32_MAX;
	uint32_t *list = ap->searcher_list.data, searchers = 0;
	bool ascending = true;
	if (in->changed) {
		memset(ap->searched.data, 0, n);
		for (uint32_t c = 0; c < in->changed_count; ++c) {
			uint32_t k = in->changed[c];
			if (k < n && !ap->searched.data[k] && in->fat[k].queried_at == in->now) {
				ap->searched.data[k] = 1;
				ascending &= searchers == 0 || list[searchers - 1] < k;
				list[searchers++] = k;
			}
		}
		if (ascending)
			return searchers;
		for (uint32_t k = 0, listed = 0; k < n; ++k)
			if (ap->searched.data[k])
				list[listed++] = k;
		return searchers;
	}
	for (uint32_t k = 0; k < n; ++k) {
		ap->searched.data[k] = in->fat[k].queried_at == in->now;
		list[searchers] = k;
		searchers += ap->searched.data[k];
	}
	return searchers;
}

bp_status bpi_active_find(bpi_active_pairs *ap, const bpi_active_input *in, bpi_pair_buffer *out, bp_frame_stats *stats)
{
	const uint32_t n = in->count;
	// The bounds packed by the last call, until this one packs them again (not when
	// it fails, or keeps nothing).
	const uint32_t packed = ap->boxes_count;
	ap->boxes_count = 0;
	const uint32_t searchers = list_searchers(ap, in);
	if (searchers == UINT32_MAX)
		return BP_ERR_OUT_OF_MEMORY;
	const double rows = in->keep ? ACTIVE_SWEEP_ROWS_KEPT : ACTIVE_SWEEP_ROWS;
	const bool few = searchers * expected_rows(ap, in) <= rows * n;
	const bool sweep = ap->valid && few;
	ap->valid = false; // until the kept pairs are whole again
	ap->rows_read = 0;
	ap->laid_out = false;
	ap->extra_laid = 0;
	ap->found_all = !sweep;
	if (!few && !in->keep)
		return find_true(ap, in, out, stats);
	bp_status status = sweep ? find_searchers(ap, in, searchers) : find_all(ap, in, stats);
	if (status != BP_OK)
		return status;
	ap->valid = true;
	return retest(ap, in, packed, out, stats);
}
