// SPDX-License-Identifier: MIT
// The synchronous step: snapshot the store, run the chosen algorithm, keep its pairs.
#include "frame.h"
#include "parallel.h"
#include "world.h"

static bpi_scene world_scene(const bp_world *w)
{
	bpi_scene s = {
		.count = w->count,
		.dims = w->dims,
		.category = w->soa.category,
		.mask = w->soa.mask,
		.flags = w->soa.flags,
		.unfiltered = w->static_count == 0 && w->filtered_count == 0,
		.threads = bpi_resolve_threads(w->thread_count),
		.cell_size = w->cell_size,
	};
	for (int axis = 0; axis < w->dims; ++axis) {
		s.min[axis] = w->soa.min[axis];
		s.max[axis] = w->soa.max[axis];
	}
	return s;
}

bp_status bpi_step_scene(bpi_index **indices, bp_algorithm requested, const bpi_scene *scene,
	bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	bp_algorithm id = requested == BP_ALGO_AUTO ? bpi_algorithm_choose(scene) : requested;
	stats->algorithm = id;
	stats->thread_count = scene->threads;
	stats->entity_count = scene->count;
	const bpi_algorithm *algorithm = bpi_algorithm_get(id);
	if (!algorithm)
		return BP_ERR_UNKNOWN_ALGORITHM;
	if (!indices[id]) {
		bp_status status = algorithm->create(&indices[id]);
		if (status != BP_OK)
			return status;
	}
	bp_status status = algorithm->find_pairs(indices[id], scene, pairs, stats);
	if (status == BP_OK)
		stats->pair_count = pairs->count;
	return status;
}

bp_status bp_world_step(bp_world *w)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	uint64_t t0 = bpi_now_ns();
	bpi_scene scene = world_scene(w);
	bp_frame_stats stats = {.frame = w->stats.frame + 1, .ns_prepare = bpi_now_ns() - t0};
	bp_status status = bpi_step_scene(w->indices, w->algorithm, &scene, &w->pairs, &stats);
	if (status != BP_OK)
		return bpi_world_fail(w, status, "%s step: %s", bp_algorithm_name(stats.algorithm),
			bp_status_string(status));
	if (w->canonical_pairs)
		bp_pairs_sort(w->pairs.data, w->pairs.count);
	stats.ns_total = bpi_now_ns() - t0;
	w->stats = stats;
	return BP_OK;
}

const bp_pair *bp_world_pairs(const bp_world *w, size_t *count)
{
	if (count)
		*count = w ? w->pairs.count : 0;
	return w ? w->pairs.data : NULL;
}

bp_frame_stats bp_world_stats(const bp_world *w)
{
	return w ? w->stats : (bp_frame_stats){0};
}
