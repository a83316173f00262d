// SPDX-License-Identifier: MIT
// Batches of queries on one view (bp_view_cast_rays_closest, _each): each query answered as its
// single form answers it, with the batch's filter or its own, into its own slot of the output,
// on the threads of the world's executor.
#include "parallel/parallel.h"
#include "query/query.h"
#include "parallel/threads.h"

/// Rays a chunk answers: enough that handing a chunk out costs little beside it.
#define RAY_GRAIN 64u

typedef struct ray_batch {
	const bp_view *v;
	const bp_ray *rays;
	const bp_query_filter *filters; ///< NULL: none
	size_t stride;                  ///< 0: one filter for every ray; 1: one each
	bp_hit *out;
} ray_batch;

/// Ray i's filter.
static const bp_query_filter *filter_of(const ray_batch *b, size_t i)
{
	return b->filters ? b->filters + i * b->stride : NULL;
}

static void closest_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const ray_batch *b = ctx;
	for (uint32_t i = begin; i < end; ++i) {
		bool found;
		const bp_ray *r = &b->rays[i];
		(void)bp_view_cast_ray_closest(b->v, r->origin, r->dir, r->max_t, filter_of(b, i), &b->out[i], &found);
		if (!found)
			b->out[i] = (bp_hit){BP_HIT_NONE, INFINITY};
	}
}

/// Checks every ray and filter, then answers them all or writes nothing.
static bp_status cast_rays_closest(const ray_batch *batch, size_t count)
{
	const bp_view *v = batch->v;
	if (!v || (count && (!batch->rays || !batch->out)) || count > UINT32_MAX)
		return BP_ERR_INVALID_ARGUMENT;
	for (size_t i = 0; i < count; ++i) {
		const bp_ray *r = &batch->rays[i];
		if (!bpi_query_filter_valid(filter_of(batch, i)))
			return BP_ERR_INVALID_ARGUMENT;
		const bp_status status = bpi_ray_check(v, r->origin, r->dir, r->max_t, filter_of(batch, i));
		if (status != BP_OK)
			return status;
	}
	if (!count)
		return BP_OK;
	// The indexes first, on this thread's team, so no ray waits on another's lazy build.
	int threads = bpi_resolve_threads(&v->settings.executor, v->settings.thread_count);
	bpi_team_failure team;
	const bool bound = bpi_executor_enter(&v->settings.executor, threads, &team) == BP_OK;
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	// Without a team the rays run here, one after another: the same answers.
	bpi_parallel_for((uint32_t)count, RAY_GRAIN, bound ? threads : 1, closest_chunk, (void *)batch);
	if (bound)
		bpi_executor_leave();
	return BP_OK;
}

bp_status bp_view_cast_rays_closest(const bp_view *v, const bp_ray *rays, size_t count,
	const bp_query_filter *filter, bp_hit *out)
{
	if (!bpi_query_filter_valid(filter))
		return BP_ERR_INVALID_ARGUMENT;
	const ray_batch batch = {v, rays, filter, 0, out};
	return cast_rays_closest(&batch, count);
}

bp_status bp_view_cast_rays_closest_each(const bp_view *v, const bp_ray *rays, size_t count,
	const bp_query_filter *filters, bp_hit *out)
{
	if (count && !filters)
		return BP_ERR_INVALID_ARGUMENT;
	const ray_batch batch = {v, rays, filters, 1, out};
	return cast_rays_closest(&batch, count);
}
