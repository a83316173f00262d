// SPDX-License-Identifier: MIT
// Pairs begun and ended between two frames, compared by handle. Two frames whose dense
// indices name the same handles (no create or destroy in between: the same layout) compare
// their (lo, hi)-sorted pairs directly; otherwise each frame's pairs are named by handle and
// sorted, once (view->names, made when first needed), and the names are compared. Either
// way one merge gives the events, which are then in handle order. Dense events whose
// entities kept their handles and keys are named on first use unless a reader named the
// last frame's (BPI_VIEW_EVENT_NAMES).
#include "parallel/parallel.h"
#include "view/view.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static uint64_t handle_id(bp_entity e) { return (uint64_t)e.index1 << 32 | e.generation; }

/// The order of (a1, b1) and (a2, b2): by a, then by b.
static int order_of(uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
	if (a1 != a2)
		return a1 < a2 ? -1 : 1;
	return b1 < b2 ? -1 : b1 > b2;
}

static int compare_named(const void *x, const void *y)
{
	const bpi_named_pair *p = x, *q = y;
	return order_of(p->a, p->b, q->a, q->b);
}

static int compare_key_pairs(const void *x, const void *y)
{
	const bp_key_pair *p = x, *q = y;
	return order_of(p->a, p->b, q->a, q->b);
}

/// The view's pairs by handle, sorted. While no slot has been reused, handles
/// increase with the dense index and the names inherit the pairs' (lo, hi)
/// order: no sort then, checked on the names themselves.
bp_status bpi_view_names_build(bp_view *view)
{
	const size_t count = view->pairs.count;
	if (!bpi_budget_array_reserve(view->budget, &view->names, count))
		return BP_ERR_OUT_OF_MEMORY;
	const bp_entity *entity = view->soa.entity;
	bpi_named_pair *names = view->names.data;
	bool sorted = true;
	for (size_t i = 0; i < count; ++i) {
		uint32_t lo = view->pairs.data[i].lo, hi = view->pairs.data[i].hi;
		uint64_t a = handle_id(entity[lo]), b = handle_id(entity[hi]);
		names[i] = a < b ? (bpi_named_pair){a, b, lo, hi} : (bpi_named_pair){b, a, hi, lo};
		sorted = sorted && (i == 0 || compare_named(&names[i - 1], &names[i]) < 0);
	}
	if (!sorted)
		qsort(names, count, sizeof *names, compare_named);
	return BP_OK;
}

static bp_pair_event event_of(const bpi_named_pair *p, const bp_view *v)
{
	const bp_entity *entity = v->soa.entity;
	const uint64_t *key = v->soa.user_key;
	return (bp_pair_event){entity[p->dense_a], entity[p->dense_b], key[p->dense_a], key[p->dense_b]};
}

/// The event of dense pair p of view v, a before b in handle order.
static bp_pair_event event_of_dense(const bp_pair *p, const bp_view *v)
{
	const bp_entity *entity = v->soa.entity;
	const uint64_t *key = v->soa.user_key;
	uint32_t a = p->lo, b = p->hi;
	if (handle_id(entity[a]) > handle_id(entity[b]))
		a = p->hi, b = p->lo;
	return (bp_pair_event){entity[a], entity[b], key[a], key[b]};
}

static int compare_events(const void *x, const void *y)
{
	const bp_pair_event *p = x, *q = y;
	return order_of(handle_id(p->a), handle_id(p->b), handle_id(q->a), handle_id(q->b));
}

/// Sorts events into handle order, unless they already are (dense order is handle
/// order until a destroy moves an entity).
static void sort_events(bp_pair_event *events, size_t count)
{
	for (size_t i = 1; i < count; ++i)
		if (compare_events(&events[i - 1], &events[i]) > 0) {
			qsort(events, count, sizeof *events, compare_events);
			return;
		}
}

/// A view's named dense events into handle order, each list.
static void sort_view_events(bp_view *view)
{
	sort_events(view->began.data, view->began_count);
	sort_events(view->ended.data, view->ended_count);
}

/// Where two views' events go: up to a capacity each, with totals.
typedef struct event_sink {
	bp_pair_event *began, *ended;
	size_t began_capacity, ended_capacity;
	size_t began_total, ended_total;
} event_sink;

/// One merge of the sorted names of `now` and `then`: names only in now began,
/// names only in then ended.
static void diff_names(const bp_view *now, const bp_view *then, event_sink *out)
{
	const bpi_named_pair *x = now->names.data, *y = then ? then->names.data : NULL;
	const size_t nx = now->pairs.count, ny = then ? then->pairs.count : 0;
	size_t i = 0, j = 0;
	while (i < nx || j < ny) {
		int order = i == nx ? 1 : j == ny ? -1 : compare_named(&x[i], &y[j]);
		if (order < 0) {
			if (out->began_total < out->began_capacity)
				out->began[out->began_total] = event_of(&x[i], now);
			out->began_total++, i++;
		} else if (order > 0) {
			if (out->ended_total < out->ended_capacity)
				out->ended[out->ended_total] = event_of(&y[j], then);
			out->ended_total++, j++;
		} else {
			i++, j++;
		}
	}
}

/// A dense pair as one number in (lo, hi) order.
static uint64_t dense_key(bp_pair p) { return (uint64_t)p.lo << 32 | p.hi; }

/// Pairs both frames hold are skipped this many at a time: most pairs last from frame to frame.
enum { SHARED_RUN = 4 };

/// The merge of x[i, nx) and y[j, ny), (lo, hi)-sorted pairs of two frames of the same
/// layout: pairs only in x go to began, pairs only in y to ended; *began_count and
/// *ended_count say how many. Each side has room for all of its list.
static void merge_dense(const bp_pair *x, size_t i, size_t nx, const bp_pair *y, size_t j, size_t ny, bp_pair *began,
	size_t *began_count, bp_pair *ended, size_t *ended_count)
{
	size_t b = 0, e = 0;
	while (i < nx && j < ny) {
		while (i + SHARED_RUN <= nx && j + SHARED_RUN <= ny && memcmp(&x[i], &y[j], SHARED_RUN * sizeof *x) == 0)
			i += SHARED_RUN, j += SHARED_RUN;
		if (i == nx || j == ny)
			break;
		const uint64_t kx = dense_key(x[i]), ky = dense_key(y[j]);
		if (kx == ky)
			i++, j++;
		else if (kx < ky)
			began[b++] = x[i++];
		else
			ended[e++] = y[j++];
	}
	for (; i < nx; ++i)
		began[b++] = x[i];
	for (; j < ny; ++j)
		ended[e++] = y[j];
	*began_count = b;
	*ended_count = e;
}

/// Turns the dense pairs at the start of each of events[0, count) into events of
/// view v. The handles and keys lie anywhere in arrays of every entity: they are
/// fetched a few events ahead, so the misses overlap (perf/README.md, "Views: extras
/// and pair events").
static void name_dense_events(bp_pair_event *events, size_t count, const bp_view *v)
{
	enum { AHEAD = 8 };
	if (count == 0)
		return; // v may be NULL: no frame before
	const bp_entity *entity = v->soa.entity;
	const uint64_t *key = v->soa.user_key;
	for (size_t i = 0; i < count; ++i) {
		bp_pair p;
		if (i + AHEAD < count) {
			memcpy(&p, &events[i + AHEAD], sizeof p);
			__builtin_prefetch(&entity[p.lo]);
			__builtin_prefetch(&entity[p.hi]);
			__builtin_prefetch(&key[p.lo]);
			__builtin_prefetch(&key[p.hi]);
		}
		memcpy(&p, &events[i], sizeof p);
		events[i] = event_of_dense(&p, v);
	}
}

/// Dense pairs into the first bytes of events, to be named later.
static void place_dense(bp_pair_event *events, const bp_pair *pairs, size_t count)
{
	for (size_t i = 0; i < count; ++i)
		memcpy(&events[i], &pairs[i], sizeof pairs[i]);
}

/// The dense merge is cut by lo into parts, each a merge of its own runs of both lists,
/// so parts run at once on the team and their events, laid end to end in part order, are
/// what one merge writes: a single merge, mostly scattered reads of handles and keys, was a
/// sizeable share of a frame's build (perf/README.md, "Views: extras and pair events").
/// Parts cover equal shares of the entities: at most one per DENSE_PART entities, and one per
/// DENSE_PART_PAIRS pairs of both lists together. Each finds its runs by binary search in lists
/// the step left cold, so a still world's few pairs take a few parts and a few searches.
enum { DENSE_PART = 1u << 14, DENSE_PART_PAIRS = 1u << 14 };

static _Atomic uint32_t part_entities = DENSE_PART, part_pairs = DENSE_PART_PAIRS;

void bpi_view_set_dense_parts(uint32_t entities, uint32_t pairs)
{
	atomic_store(&part_entities, entities ? entities : DENSE_PART);
	atomic_store(&part_pairs, pairs ? pairs : DENSE_PART_PAIRS);
}

/// One part of the dense merge: its runs of both lists, then what it found.
typedef struct dense_part {
	size_t x_begin, x_end, y_begin, y_end;
	size_t began, ended;             ///< found, in the scratch from x_begin and from nx + y_begin
	size_t began_at, ended_at;       ///< where they go in the view's events
} dense_part;

typedef struct dense_diff_job {
	bp_view *now;
	const bp_view *then;
	dense_part *parts;
	bp_pair *scratch; ///< room for both lists: each part's finds go at its runs' starts
	bool name; ///< name the events as they are placed (else bpi_view_events_name does, later)
	uint32_t entities, part_count; ///< part p: lo in [entities * p, entities * (p + 1)) / part_count
} dense_diff_job;

/// The first of n (lo, hi)-sorted pairs whose lo is >= lo.
static size_t first_from(const bp_pair *p, size_t n, uint32_t lo)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (p[mid].lo < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/// The first of n (lo, hi)-sorted pairs whose lo is at or past the start of `part`.
static size_t part_start(const dense_diff_job *job, const bp_pair *p, size_t n, uint32_t part)
{
	if (part == 0 || n == 0)
		return 0;
	if (part == job->part_count)
		return n;
	return first_from(p, n, (uint32_t)((uint64_t)job->entities * part / job->part_count));
}

static void dense_merge_parts(uint32_t first, uint32_t last, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const dense_diff_job *job = ctx;
	const bp_pair *x = job->now->pairs.data, *y = job->then ? job->then->pairs.data : NULL;
	const size_t nx = job->now->pairs.count, ny = job->then ? job->then->pairs.count : 0;
	for (uint32_t part = first; part < last; ++part) {
		dense_part *d = &job->parts[part];
		d->x_begin = part_start(job, x, nx, part);
		d->x_end = part_start(job, x, nx, part + 1);
		d->y_begin = part_start(job, y, ny, part);
		d->y_end = part_start(job, y, ny, part + 1);
		merge_dense(x, d->x_begin, d->x_end, y, d->y_begin, d->y_end, job->scratch + d->x_begin, &d->began,
			job->scratch + nx + d->y_begin, &d->ended);
	}
}

static void dense_place_parts(uint32_t first, uint32_t last, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const dense_diff_job *job = ctx;
	bp_view *now = job->now;
	for (uint32_t part = first; part < last; ++part) {
		const dense_part *d = &job->parts[part];
		bp_pair_event *began = now->began.data + d->began_at, *ended = now->ended.data + d->ended_at;
		place_dense(began, job->scratch + d->x_begin, d->began);
		place_dense(ended, job->scratch + now->pairs.count + d->y_begin, d->ended);
		if (job->name) {
			name_dense_events(began, d->began, now);
			name_dense_events(ended, d->ended, job->then);
		}
	}
}

/// The events between two frames of the same layout into view->began and view->ended,
/// named with `name`, else left as dense pairs for bpi_view_events_name.
static bp_status diff_dense(bp_view *view, const bp_view *prev, bool name, int threads)
{
	const uint32_t n = BP_MAX(view->count, prev ? prev->count : 0);
	const size_t nx = view->pairs.count, ny = prev ? prev->pairs.count : 0;
	const uint32_t entities = atomic_load_explicit(&part_entities, memory_order_relaxed);
	const size_t pairs = atomic_load_explicit(&part_pairs, memory_order_relaxed);
	const uint32_t parts = (uint32_t)BP_MAX(BP_MIN(bpi_chunk_count(n, entities), (nx + ny) / pairs), 1u);
	dense_part *part = bpi_alloc(parts * sizeof *part);
	// At least one of each, so no pointer below is NULL + 0.
	if (!part || !bpi_budget_array_reserve(view->budget, &view->scratch, BP_MAX(nx + ny, (size_t)1))) {
		bpi_free(part, parts * sizeof *part);
		return BP_ERR_OUT_OF_MEMORY;
	}
	dense_diff_job job = {view, prev, part, view->scratch.data, name, n, parts};
	bpi_parallel_for(parts, 1, threads, dense_merge_parts, &job);
	size_t began = 0, ended = 0;
	for (uint32_t p = 0; p < parts; ++p) {
		part[p].began_at = began, part[p].ended_at = ended;
		began += part[p].began, ended += part[p].ended;
	}
	bp_status status = BP_OK;
	if (!bpi_budget_array_reserve(view->budget, &view->began, BP_MAX(began, (size_t)1)) ||
		!bpi_budget_array_reserve(view->budget, &view->ended, BP_MAX(ended, (size_t)1)))
		status = BP_ERR_OUT_OF_MEMORY;
	if (status == BP_OK)
		bpi_parallel_for(parts, 1, threads, dense_place_parts, &job);
	bpi_free(part, parts * sizeof *part);
	view->began_count = status == BP_OK ? began : 0;
	view->ended_count = status == BP_OK ? ended : 0;
	return status;
}

/// The key pairs of events, each a <= b, sorted by (a, b).
static void key_pairs_of(const bp_pair_event *events, size_t count, bp_key_pair *out)
{
	for (size_t i = 0; i < count; ++i) {
		uint64_t a = events[i].key_a, b = events[i].key_b;
		out[i] = a <= b ? (bp_key_pair){a, b} : (bp_key_pair){b, a};
	}
	if (count > 1) // none: both arrays may be NULL, which qsort must not get
		qsort(out, count, sizeof *out, compare_key_pairs);
}

/// Whether view names the entities of prev's dense indices with the same handles and keys:
/// only bounds changed between the two snapshots.
static bool same_names(const bp_view *view, const bp_view *prev)
{
	return prev && prev->layout == view->layout && view->changes_since == prev->number && view->changes_bounds_only;
}

bp_status bpi_view_events_build(bp_view *view, const bp_view *prev, unsigned *made, int threads)
{
	// Events by dense index where the layout allows: naming every pair by handle and
	// merging the names costs more, where the dense merge reads a third as many bytes and
	// writes nothing per pair (perf/README.md, "Views: extras and pair events").
	view->previous = prev ? prev->number : 0;
	*made = 0;
	if (!prev || prev->layout == view->layout) {
		// Named on first use where this view's own handles and keys name prev's pairs too,
		// unless a reader named the last frame's: a host that only counts events, or reads
		// none, pays for the merge alone.
		const bool later = same_names(view, prev) &&
				   !(atomic_load_explicit(&prev->asked, memory_order_relaxed) & BPI_VIEW_EVENT_NAMES);
		bp_status status = diff_dense(view, prev, !later, threads);
		if (status == BP_OK && !later) {
			sort_view_events(view);
			*made = BPI_VIEW_EVENT_NAMES;
		}
		return status;
	}
	bp_status status = bpi_view_names_build(view);
	if (status == BP_OK)
		status = bpi_view_ensure(prev, BPI_VIEW_NAMES);
	if (status != BP_OK)
		return status;
	event_sink count = {0};
	diff_names(view, prev, &count);
	if (!bpi_budget_array_reserve(view->budget, &view->began, count.began_total) ||
		!bpi_budget_array_reserve(view->budget, &view->ended, count.ended_total))
		return BP_ERR_OUT_OF_MEMORY;
	event_sink sink = {view->began.data, view->ended.data, count.began_total, count.ended_total, 0, 0};
	diff_names(view, prev, &sink);
	view->began_count = sink.began_total;
	view->ended_count = sink.ended_total;
	*made = BPI_VIEW_NAMES | BPI_VIEW_EVENT_NAMES;
	return BP_OK;
}

bp_status bpi_view_events_name(bp_view *view)
{
	name_dense_events(view->began.data, view->began_count, view);
	name_dense_events(view->ended.data, view->ended_count, view); // the same names as the last frame's
	sort_view_events(view);
	return BP_OK;
}

bp_status bpi_view_keys_build(bp_view *view)
{
	if (!bpi_budget_array_reserve(view->budget, &view->began_keys, view->began_count) ||
		!bpi_budget_array_reserve(view->budget, &view->ended_keys, view->ended_count))
		return BP_ERR_OUT_OF_MEMORY;
	key_pairs_of(view->began.data, view->began_count, view->began_keys.data);
	key_pairs_of(view->ended.data, view->ended_count, view->ended_keys.data);
	return BP_OK;
}

void bpi_view_events_free(bp_view *view)
{
	bpi_budget_array_free(view->budget, &view->names);
	bpi_budget_array_free(view->budget, &view->began);
	bpi_budget_array_free(view->budget, &view->ended);
	bpi_budget_array_free(view->budget, &view->began_keys);
	bpi_budget_array_free(view->budget, &view->ended_keys);
}

/// The view and both of the caller's buffers, as every query checks its one buffer.
static bool buffers_valid(const bp_view *v, const void *began, size_t began_capacity, const size_t *began_total,
	const void *ended, size_t ended_capacity, const size_t *ended_total)
{
	return bpi_view_check_buffer(v, began, began_capacity, began_total) == BP_OK &&
	       bpi_view_check_buffer(v, ended, ended_capacity, ended_total) == BP_OK;
}

/// Hands out a view's began and ended items (`size` bytes each) into the caller's
/// checked buffers, up to each capacity, with the totals.
static bp_status copy_events(const bp_view *v, const void *began_items, const void *ended_items, size_t size,
	void *began, size_t began_capacity, size_t *began_total, void *ended, size_t ended_capacity, size_t *ended_total)
{
	if (began_capacity && v->began_count)
		memcpy(began, began_items, BP_MIN(began_capacity, v->began_count) * size);
	if (ended_capacity && v->ended_count)
		memcpy(ended, ended_items, BP_MIN(ended_capacity, v->ended_count) * size);
	*began_total = v->began_count;
	*ended_total = v->ended_count;
	bp_status began_status = BPI_BUFFER_STATUS(v->began_count, began_capacity);
	return began_status != BP_OK ? began_status : BPI_BUFFER_STATUS(v->ended_count, ended_capacity);
}

bp_status bp_view_events(const bp_view *v, bp_pair_event *began, size_t began_capacity, size_t *began_total,
	bp_pair_event *ended, size_t ended_capacity, size_t *ended_total)
{
	if (!buffers_valid(v, began, began_capacity, began_total, ended, ended_capacity, ended_total))
		return BP_ERR_INVALID_ARGUMENT;
	// Counts alone need no names, and must not read the arrays another reader may be naming.
	if (began_capacity || ended_capacity) {
		bp_status status = bpi_view_ensure(v, BPI_VIEW_EVENT_NAMES);
		if (status != BP_OK)
			return status;
	}
	return copy_events(v, v->began.data, v->ended.data, sizeof *began, began, began_capacity, began_total, ended,
		ended_capacity, ended_total);
}

bp_status bp_view_pair_events(const bp_view *v, bp_key_pair *began, size_t began_capacity, size_t *began_total,
	bp_key_pair *ended, size_t ended_capacity, size_t *ended_total)
{
	if (!buffers_valid(v, began, began_capacity, began_total, ended, ended_capacity, ended_total))
		return BP_ERR_INVALID_ARGUMENT;
	// Counts alone need no key pairs, and must not read the arrays another reader
	// may be building under the view's lock.
	const bp_key_pair *began_keys = NULL, *ended_keys = NULL;
	if (began_capacity || ended_capacity) {
		bp_status status = bpi_view_ensure(v, BPI_VIEW_EVENT_NAMES | BPI_VIEW_KEYS);
		if (status != BP_OK)
			return status;
		began_keys = v->began_keys.data;
		ended_keys = v->ended_keys.data;
	}
	return copy_events(v, began_keys, ended_keys, sizeof *began, began, began_capacity, began_total, ended,
		ended_capacity, ended_total);
}

uint64_t bp_view_previous_frame(const bp_view *v) { return v ? v->previous : 0; }

bp_status bp_view_events_since(const bp_view *v, const bp_view *earlier, bp_pair_event *began, size_t began_capacity,
	size_t *began_total, bp_pair_event *ended, size_t ended_capacity, size_t *ended_total)
{
	if (!buffers_valid(v, began, began_capacity, began_total, ended, ended_capacity, ended_total) || !earlier ||
		earlier->pool != v->pool || earlier->number > v->number || v->world_view || earlier->world_view)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = bpi_view_ensure(v, BPI_VIEW_NAMES);
	if (status == BP_OK)
		status = bpi_view_ensure(earlier, BPI_VIEW_NAMES);
	if (status != BP_OK)
		return status;
	event_sink sink = {began, ended, began_capacity, ended_capacity, 0, 0};
	diff_names(v, earlier, &sink);
	*began_total = sink.began_total;
	*ended_total = sink.ended_total;
	bp_status began_status = BPI_BUFFER_STATUS(sink.began_total, began_capacity);
	return began_status != BP_OK ? began_status : BPI_BUFFER_STATUS(sink.ended_total, ended_capacity);
}
