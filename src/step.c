// SPDX-License-Identifier: MIT
// The synchronous step: snapshot the store, run the chosen algorithm, keep its pairs.
#include "frame.h"
#include "parallel.h"
#include "periodic.h"
#include "probes.h"
#include "world.h"

bpi_scene bpi_scene_of_soa(const bpi_soa *soa, uint32_t count, int dims, bool unfiltered, int thread_count,
	float cell_size)
{
	bpi_scene s = {
		.count = count,
		.dims = dims,
		.category = soa->category,
		.mask = soa->mask,
		.flags = soa->flags,
		.unfiltered = unfiltered,
		.threads = bpi_resolve_threads(thread_count),
		.cell_size = cell_size,
	};
	for (int axis = 0; axis < dims; ++axis) {
		s.min[axis] = soa->min[axis];
		s.max[axis] = soa->max[axis];
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
	BPI_MARK_FIND_PAIRS_BEGIN(id, scene->count);
	bp_status status = algorithm->find_pairs(indices[id], scene, pairs, stats);
	BPI_MARK_FIND_PAIRS_END(id, status, status == BP_OK ? pairs->count : 0);
	// AUTO must not fail where sap succeeds: grid and hash return UNSUPPORTED when a span
	// overflows float (boxes near +-3e38, found by tests/fuzz/fuzz_api); sap takes any finite bounds.
	if (status == BP_ERR_UNSUPPORTED && requested == BP_ALGO_AUTO && id != BP_ALGO_SAP &&
		bpi_algorithm_get(BP_ALGO_SAP))
		return bpi_step_scene(indices, BP_ALGO_SAP, scene, pairs, stats);
	if (status == BP_OK)
		stats->pair_count = pairs->count;
	return status;
}

bp_status bp_world_step(bp_world *w)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	BPI_MARK_FRAME_BEGIN(w->stats.frame + 1, w->count);
	BPI_MARK_STAGE_BEGIN(BPI_STAGE_PREPARE);
	uint64_t t0 = bpi_now_ns();
	bpi_scene scene = bpi_scene_of_soa(&w->soa, w->count, w->dims, bpi_world_unfiltered(w),
		w->thread_count, w->cell_size);
	bp_frame_stats stats = {.frame = w->stats.frame + 1, .ns_prepare = bpi_now_ns() - t0};
	BPI_MARK_STAGE_END(BPI_STAGE_PREPARE);
	bpi_periodic_fault fault = {0};
	bp_status status = w->periodic
		? bpi_periodic_step(&w->periodic_state, w->indices, w->algorithm, &scene, w->period, &w->pairs, &stats, &fault)
		: bpi_step_scene(w->indices, w->algorithm, &scene, &w->pairs, &stats);
	if (status != BP_OK)
		BPI_MARK_FRAME_END(stats.frame, 0, bpi_now_ns() - t0, status);
	if (status == BP_ERR_OUT_OF_RANGE && w->periodic) {
		if (fault.axis < 0)
			return bpi_world_fail(w, status, "periodic step: %u entities need more than %u boxes with ghosts",
				fault.entity, UINT32_MAX - 1);
		return bpi_world_fail(w, status, "entity %u: extent_%c %.9g > period_%c / 2 = %.9g", fault.entity,
			"xyz"[fault.axis], fault.extent, "xyz"[fault.axis], (double)w->period[fault.axis] * 0.5);
	}
	if (status != BP_OK)
		return bpi_world_fail(w, status, "%s step: %s", bp_algorithm_name(stats.algorithm),
			bp_status_string(status));
	if (w->canonical_pairs && !w->periodic) // periodic pairs are sorted already
		bp_pairs_sort(w->pairs.data, w->pairs.count);
	stats.ns_total = bpi_now_ns() - t0;
	BPI_MARK_FRAME_END(stats.frame, stats.pair_count, stats.ns_total, BP_OK);
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
