// SPDX-License-Identifier: MIT
// Pairs begun and ended between two frames, compared by handle. Two frames whose dense
// indices name the same handles (no create or destroy in between: the same layout) compare
// their (lo, hi)-sorted pairs directly; otherwise each frame's pairs are named by handle and
// sorted, once (view->names, made when first needed), and the names are compared. Either
// way one merge gives the events, which are then in handle order.
#include "parallel/parallel.h"
#include "view/view.h"

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

static int compare_pairs(const bp_pair *p, const bp_pair *q) { return order_of(p->lo, p->hi, q->lo, q->hi); }

/// The merge of x[i, nx) and y[j, ny), (lo, hi)-sorted pairs of two frames of the
/// same layout, into `out`.
static void merge_dense(const bp_view *now, size_t i, size_t nx, const bp_view *then, size_t j, size_t ny,
	event_sink *out)
{
	const bp_pair *x = now->pairs.data, *y = then ? then->pairs.data : NULL;
	while (i < nx || j < ny) {
		int order = i == nx ? 1 : j == ny ? -1 : compare_pairs(&x[i], &y[j]);
		if (order < 0) {
			if (out->began_total < out->began_capacity)
				memcpy(&out->began[out->began_total], &x[i], sizeof x[i]); // named after the merge
			out->began_total++, i++;
		} else if (order > 0) {
			if (out->ended_total < out->ended_capacity)
				memcpy(&out->ended[out->ended_total], &y[j], sizeof y[j]);
			out->ended_total++, j++;
		} else {
			i++, j++;
		}
	}
}

/// Turns the dense pairs a merge left at the start of each of events[0, count)
/// into events of view v. The handles and keys lie anywhere in arrays of every
/// entity: they are fetched a few events ahead, so the misses overlap
/// (perf/README.md, "Views: extras and pair events").
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

/// The dense merge is cut by lo into parts of DENSE_PART entities, each a merge of
/// its own runs of both lists, so parts run at once on the team and their events,
/// laid end to end in part order, are what one merge writes: a single merge, mostly
/// scattered reads of handles and keys, was a sizeable share of a frame's build
/// (perf/README.md, "Views: extras and pair events").
enum { DENSE_PART = 1u << 14 };

typedef struct dense_diff_job {
	const bp_view *now, *then;
	event_sink *parts; ///< per part: counts on the first pass, room on the second
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

static void dense_diff_part(uint32_t begin, uint32_t end, uint32_t part, void *ctx)
{
	const dense_diff_job *job = ctx;
	const bp_view *now = job->now, *then = job->then;
	size_t nx = now->pairs.count, ny = then ? then->pairs.count : 0;
	const bp_pair *x = now->pairs.data, *y = then ? then->pairs.data : NULL;
	event_sink *sink = &job->parts[part];
	merge_dense(now, first_from(x, nx, begin), first_from(x, nx, end), then, ny ? first_from(y, ny, begin) : 0,
		ny ? first_from(y, ny, end) : 0, sink);
	name_dense_events(sink->began, BP_MIN(sink->began_total, sink->began_capacity), now);
	name_dense_events(sink->ended, BP_MIN(sink->ended_total, sink->ended_capacity), then);
}

/// The events between two frames of the same layout into view->began and view->ended.
static bp_status diff_dense(bp_view *view, const bp_view *prev, int threads)
{
	const uint32_t n = BP_MAX(view->count, prev ? prev->count : 0);
	const uint32_t parts = BP_MAX(bpi_chunk_count(n, DENSE_PART), 1u);
	event_sink *sinks = bpi_alloc(parts * sizeof *sinks);
	if (!sinks)
		return BP_ERR_OUT_OF_MEMORY;
	memset(sinks, 0, parts * sizeof *sinks);
	dense_diff_job job = {view, prev, sinks};
	bpi_parallel_for(n, DENSE_PART, threads, dense_diff_part, &job); // counts
	size_t began = 0, ended = 0;
	for (uint32_t p = 0; p < parts; ++p)
		began += sinks[p].began_total, ended += sinks[p].ended_total;
	bp_status status = BP_OK;
	if (!bpi_budget_array_reserve(view->budget, &view->began, began) ||
		!bpi_budget_array_reserve(view->budget, &view->ended, ended))
		status = BP_ERR_OUT_OF_MEMORY;
	began = ended = 0;
	for (uint32_t p = 0; status == BP_OK && p < parts; ++p) {
		// An empty array may be NULL, and NULL + 0 is undefined.
		event_sink room = {sinks[p].began_total ? view->began.data + began : NULL,
			sinks[p].ended_total ? view->ended.data + ended : NULL, sinks[p].began_total, sinks[p].ended_total, 0,
			0};
		began += sinks[p].began_total, ended += sinks[p].ended_total;
		sinks[p] = room;
	}
	if (status == BP_OK)
		bpi_parallel_for(n, DENSE_PART, threads, dense_diff_part, &job);
	bpi_free(sinks, parts * sizeof *sinks);
	view->began_count = began;
	view->ended_count = ended;
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

bp_status bpi_view_events_build(bp_view *view, const bp_view *prev, bool *named, int threads)
{
	// Events by dense index where the layout allows: naming every pair by handle and
	// merging the names costs more, where the dense merge reads a third as many bytes and
	// writes nothing per pair (perf/README.md, "Views: extras and pair events").
	view->previous = prev ? prev->number : 0;
	*named = prev && prev->layout != view->layout;
	if (!*named) {
		bp_status status = diff_dense(view, prev, threads);
		if (status == BP_OK) {
			sort_events(view->began.data, view->began_count);
			sort_events(view->ended.data, view->ended_count);
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
		bp_status status = bpi_view_ensure(v, BPI_VIEW_KEYS);
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
		earlier->pool != v->pool || earlier->number > v->number)
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
