// SPDX-License-Identifier: MIT
// Batches of queries on one view (bp_view_cast_rays_closest): each query answered as its single form
// answers it, into its own slot of the output, on the threads of the world's executor.
#include "parallel/parallel.h"
#include "query/query.h"
#include "parallel/threads.h"

/// Rays a chunk answers: enough that handing a chunk out costs little beside it.
#define RAY_GRAIN 64u

typedef struct ray_batch {
	const bp_view *v;
	const bp_ray *rays;
	const bp_query_filter *filter;
	bp_hit *out;
} ray_batch;

static void closest_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const ray_batch *b = ctx;
	for (uint32_t i = begin; i < end; ++i) {
		bool found;
		const bp_ray *r = &b->rays[i];
		(void)bp_view_cast_ray_closest(b->v, r->origin, r->dir, r->max_t, b->filter, &b->out[i], &found);
		if (!found)
			b->out[i] = (bp_hit){BP_HIT_NONE, INFINITY};
	}
}

bp_status bp_view_cast_rays_closest(const bp_view *v, const bp_ray *rays, size_t count,
	const bp_query_filter *filter, bp_hit *out)
{
	if (!v || (count && (!rays || !out)) || count > UINT32_MAX || !bpi_query_filter_valid(filter))
		return BP_ERR_INVALID_ARGUMENT;
	for (size_t i = 0; i < count; ++i) {
		const bp_status status = bpi_ray_check(v, rays[i].origin, rays[i].dir, rays[i].max_t, filter);
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
	ray_batch batch = {v, rays, filter, out};
	// Without a team the rays run here, one after another: the same answers.
	bpi_parallel_for((uint32_t)count, RAY_GRAIN, bound ? threads : 1, closest_chunk, &batch);
	if (bound)
		bpi_executor_leave();
	return BP_OK;
}
