// SPDX-License-Identifier: MIT
// Batches of queries on one view (closest rays and box casts, k nearest of points, each with
// one filter for all or one each): every query checked first, then each answered as its
// single form answers it, into its own slot of the output, on the threads of the world's
// executor.
#include "parallel/parallel.h"
#include "query/query.h"
#include "parallel/threads.h"

/// Queries a chunk answers: enough that handing a chunk out costs little beside it.
#define QUERY_GRAIN 64u

typedef struct query_batch query_batch;

/// One kind of query: its checks (the single form's errors) and its answer, for query i.
typedef struct batch_kind {
	bp_status (*check)(const query_batch *b, size_t i);
	void (*answer)(const query_batch *b, size_t i);
} batch_kind;

struct query_batch {
	const batch_kind *kind;
	const bp_view *v;
	const void *queries;            ///< bp_ray, bp_box_cast or 3 floats per point
	const bp_query_filter *filters; ///< NULL: none
	size_t stride;                  ///< 0: one filter for every query; 1: one each
	bp_hit *out;
	uint32_t k;                     ///< nearest: hits per point, at out + i * k
	size_t *counts;                 ///< nearest: hits found per point
};

/// Query i's filter.
static const bp_query_filter *filter_of(const query_batch *b, size_t i)
{
	return b->filters ? b->filters + i * b->stride : NULL;
}

// ---- the kinds ------------------------------------------------------------------------

static bp_status ray_check(const query_batch *b, size_t i)
{
	const bp_ray *r = (const bp_ray *)b->queries + i;
	return bpi_ray_check(b->v, r->origin, r->dir, r->max_t, filter_of(b, i));
}

static void ray_answer(const query_batch *b, size_t i)
{
	const bp_ray *r = (const bp_ray *)b->queries + i;
	bool found;
	(void)bp_view_cast_ray_closest(b->v, r->origin, r->dir, r->max_t, filter_of(b, i), &b->out[i], &found);
	if (!found)
		b->out[i] = (bp_hit){BP_HIT_NONE, INFINITY};
}

static bp_status cast_check(const query_batch *b, size_t i)
{
	const bp_box_cast *c = (const bp_box_cast *)b->queries + i;
	return bpi_box_cast_check(b->v, c->min, c->max, c->dir, c->max_t, filter_of(b, i));
}

static void cast_answer(const query_batch *b, size_t i)
{
	const bp_box_cast *c = (const bp_box_cast *)b->queries + i;
	bool found;
	(void)bp_view_cast_box_closest(b->v, c->min, c->max, c->dir, c->max_t, filter_of(b, i), &b->out[i], &found);
	if (!found)
		b->out[i] = (bp_hit){BP_HIT_NONE, INFINITY};
}

static bp_status nearest_check(const query_batch *b, size_t i)
{
	return bpi_nearest_check(b->v, (const float *)b->queries + 3 * i, filter_of(b, i));
}

static void nearest_answer(const query_batch *b, size_t i)
{
	bp_hit *hits = b->k ? b->out + i * b->k : NULL; // k = 0 may come with no room at all
	(void)bp_view_nearest(b->v, (const float *)b->queries + 3 * i, b->k, filter_of(b, i), hits, &b->counts[i]);
}

static const batch_kind rays = {ray_check, ray_answer}, casts = {cast_check, cast_answer},
			nearest = {nearest_check, nearest_answer};

// ---- the batch ------------------------------------------------------------------------

static void answer_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const query_batch *b = ctx;
	for (uint32_t i = begin; i < end; ++i)
		b->kind->answer(b, i);
}

/// Checks every query and filter, then answers them all or writes nothing.
static bp_status run_batch(const query_batch *batch, size_t count)
{
	const bp_view *v = batch->v;
	if (!v || (count && !batch->queries) || count > UINT32_MAX)
		return BP_ERR_INVALID_ARGUMENT;
	for (size_t i = 0; i < count; ++i) { // each kind's checks test its filter too
		const bp_status status = batch->kind->check(batch, i);
		if (status != BP_OK)
			return status;
	}
	if (!count)
		return BP_OK;
	// The indexes first, on this thread's team, so no query waits on another's lazy build.
	int threads = bpi_resolve_threads(&v->settings.executor, v->settings.thread_count);
	bpi_team_failure team;
	const bool bound = bpi_executor_enter(&v->settings.executor, threads, &team) == BP_OK;
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	// Without a team the queries run here, one after another: the same answers.
	bpi_parallel_for((uint32_t)count, QUERY_GRAIN, bound ? threads : 1, answer_chunk, (void *)batch);
	if (bound)
		bpi_executor_leave();
	return BP_OK;
}

/// Whether a batch's filter argument may be used: one filter, valid or NULL (stride 0), or
/// one each, present where there are queries (stride 1; each is checked with its query).
static bool filters_given(const bp_query_filter *filters, size_t stride, size_t count)
{
	return stride ? !count || filters : bpi_query_filter_valid(filters);
}

/// A closest-hit batch of `kind`: one filter (stride 0) or one each (stride 1).
static bp_status closest_batch(const batch_kind *kind, const bp_view *v, const void *queries, size_t count,
	const bp_query_filter *filters, size_t stride, bp_hit *out)
{
	if (!filters_given(filters, stride, count) || (count && !out))
		return BP_ERR_INVALID_ARGUMENT;
	const query_batch batch = {.kind = kind, .v = v, .queries = queries, .filters = filters, .stride = stride,
		.out = out};
	return run_batch(&batch, count);
}

bp_status bp_view_cast_rays_closest(const bp_view *v, const bp_ray *rays_in, size_t count,
	const bp_query_filter *filter, bp_hit *out)
{
	return closest_batch(&rays, v, rays_in, count, filter, 0, out);
}

bp_status bp_view_cast_rays_closest_each(const bp_view *v, const bp_ray *rays_in, size_t count,
	const bp_query_filter *filters, bp_hit *out)
{
	return closest_batch(&rays, v, rays_in, count, filters, 1, out);
}

bp_status bp_view_cast_boxes_closest(const bp_view *v, const bp_box_cast *casts_in, size_t count,
	const bp_query_filter *filter, bp_hit *out)
{
	return closest_batch(&casts, v, casts_in, count, filter, 0, out);
}

bp_status bp_view_cast_boxes_closest_each(const bp_view *v, const bp_box_cast *casts_in, size_t count,
	const bp_query_filter *filters, bp_hit *out)
{
	return closest_batch(&casts, v, casts_in, count, filters, 1, out);
}

/// A k-nearest batch: one filter (stride 0) or one each (stride 1).
static bp_status nearest_batch(const bp_view *v, const float *points, size_t count, uint32_t k,
	const bp_query_filter *filters, size_t stride, bp_hit *out, size_t *counts)
{
	if (!filters_given(filters, stride, count) || (count && (!counts || (k && !out))) ||
		(uint64_t)count * k > SIZE_MAX / sizeof *out)
		return BP_ERR_INVALID_ARGUMENT;
	const query_batch batch = {.kind = &nearest, .v = v, .queries = points, .filters = filters, .stride = stride,
		.out = out, .k = k, .counts = counts};
	return run_batch(&batch, count);
}

bp_status bp_view_nearest_points(const bp_view *v, const float *points, size_t count, uint32_t k,
	const bp_query_filter *filter, bp_hit *out, size_t *counts)
{
	return nearest_batch(v, points, count, k, filter, 0, out, counts);
}

bp_status bp_view_nearest_points_each(const bp_view *v, const float *points, size_t count, uint32_t k,
	const bp_query_filter *filters, bp_hit *out, size_t *counts)
{
	return nearest_batch(v, points, count, k, filters, 1, out, counts);
}
