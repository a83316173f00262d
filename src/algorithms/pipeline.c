// SPDX-License-Identifier: MIT
// The pair-finding pipeline every step runs, whatever the algorithm: the algorithm builds
// and finds into per-chunk buffers; timing, probes, the chunk-order merge and the
// statistics happen here, once.
#include "algorithms/pipeline.h"
#include "algorithms/statics.h"
#include "parallel/parallel.h"
#include "base/probes.h"

#include <string.h>

static bp_status index_create(const bpi_algorithm *algorithm, bpi_index **out)
{
	BP_ASSERT(algorithm->index_size >= sizeof(bpi_index));
	bpi_index *index = bpi_alloc(algorithm->index_size);
	if (!index)
		return BP_ERR_OUT_OF_MEMORY;
	memset(index, 0, algorithm->index_size);
	index->algorithm = algorithm;
	if (algorithm->init)
		algorithm->init(index);
	*out = index;
	return BP_OK;
}

static void index_destroy(bpi_index *index)
{
	if (index->algorithm->release)
		index->algorithm->release(index);
	bpi_pair_chunks_free(&index->chunks);
	bpi_free(index, index->algorithm->index_size);
}

void bpi_indexes_free(bpi_indexes *indexes)
{
	for (int i = 0; i < BP_ALGO_COUNT; ++i)
		if (indexes->of[i])
			index_destroy(indexes->of[i]);
	if (indexes->statics) {
		bpi_statics_free(indexes->statics);
		bpi_free(indexes->statics, sizeof *indexes->statics);
	}
	*indexes = (bpi_indexes){0};
}

// Build, find, merge, each timed and marked. The probes open the build stage in
// BPI_MARK_FIND_PAIRS_BEGIN and close whatever stage is open in ..._END.
static bp_status run_stages(bpi_index *index, const bpi_scene *scene, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	const bpi_algorithm *algorithm = index->algorithm;
	bpi_build build = {0};
	uint64_t t0 = bpi_now_ns();
	bpi_loop_clock_stage(BPI_STAGE_BUILD);
	bp_status status = algorithm->build(index, scene, &build);
	index->chunks.budget = scene->budget;
	if (status == BP_OK)
		status = bpi_pair_chunks_reset(&index->chunks, build.chunks);
	if (status != BP_OK)
		return status;
	uint64_t t1 = bpi_now_ns();
	BPI_MARK_STAGE_NEXT(BPI_STAGE_BUILD, BPI_STAGE_FIND);
	bpi_loop_clock_stage(BPI_STAGE_FIND);
	status = algorithm->find(index, scene, &build);
	if (status != BP_OK)
		return status;
	uint64_t t2 = bpi_now_ns();
	BPI_MARK_STAGE_NEXT(BPI_STAGE_FIND, BPI_STAGE_MERGE);
	bpi_loop_clock_stage(BPI_STAGE_MERGE);
	status = bpi_pair_chunks_merge(&index->chunks, pairs, scene->threads);
	uint64_t t3 = bpi_now_ns();
	bpi_loop_clock_stage(BPI_STAGE_PREPARE);
	BPI_MARK_STAGE_DONE(BPI_STAGE_MERGE);
	stats->candidate_tests = bpi_pair_chunks_tests(&index->chunks);
	stats->cell_count = build.cell_count;
	stats->cell_size = build.cell_size;
	memcpy(stats->cell_origin, build.cell_origin, sizeof stats->cell_origin);
	stats->ns_build = t1 - t0;
	stats->ns_find = t2 - t1;
	stats->ns_merge = t3 - t2;
	return status;
}

static bp_status run_algorithm(bpi_indexes *indexes, bp_algorithm requested, const bpi_scene *scene,
	bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	bp_algorithm id = requested == BP_ALGO_AUTO ? bpi_algorithm_choose(scene) : requested;
	stats->algorithm = id;
	stats->thread_count = scene->threads;
	stats->entity_count = scene->count;
	const bpi_algorithm *algorithm = bpi_algorithm_get(id);
	if (!algorithm)
		return BP_ERR_UNKNOWN_ALGORITHM;
	if (!indexes->of[id]) {
		bp_status status = index_create(algorithm, &indexes->of[id]);
		if (status != BP_OK)
			return status;
	}
	BPI_MARK_FIND_PAIRS_BEGIN(id, scene->count);
	bp_status status = run_stages(indexes->of[id], scene, pairs, stats);
	BPI_MARK_FIND_PAIRS_END(id, status, status == BP_OK ? pairs->count : 0);
	// The chunk buffers of a step out of memory hold part of a pair set no one
	// will read: give that memory back to a host that is short of it.
	if (status == BP_ERR_OUT_OF_MEMORY)
		bpi_pair_chunks_free(&indexes->of[id]->chunks);
	// AUTO must not fail where sap succeeds: grid and hash return UNSUPPORTED when a span
	// overflows float (boxes near +-3e38, found by tests/fuzz/fuzz_api); sap takes any finite bounds.
	if (status == BP_ERR_UNSUPPORTED && requested == BP_ALGO_AUTO && id != BP_ALGO_SAP &&
		bpi_algorithm_get(BP_ALGO_SAP))
		return run_algorithm(indexes, BP_ALGO_SAP, scene, pairs, stats);
	if (status == BP_OK)
		stats->pair_count = pairs->count;
	return status;
}

/// The split of a scene with few dynamic entities (statics.h): the algorithm over those,
/// then their walks of the static entities' tree.
static bp_status run_split(bpi_indexes *indexes, bp_algorithm requested, const bpi_scene *scene,
	const bpi_scene *movers, uint64_t split_ns, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	if (bpi_budget_above_limit(scene->budget))
		bpi_statics_drop_pairs(indexes->statics);
	bp_status status = run_algorithm(indexes, requested, movers, &indexes->statics->movers_pairs, stats);
	if (status == BP_OK)
		status = bpi_statics_join(indexes->statics, scene, pairs, stats);
	if (status != BP_OK)
		bpi_statics_drop_pairs(indexes->statics);
	stats->entity_count = scene->count;
	stats->ns_build += split_ns;
	if (status == BP_OK)
		stats->pair_count = pairs->count;
	return status;
}

bp_status bpi_pipeline_run(bpi_indexes *indexes, bp_algorithm requested, const bpi_scene *scene,
	bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	if (!indexes->statics && !scene->unfiltered) {
		indexes->statics = bpi_alloc(sizeof *indexes->statics);
		if (!indexes->statics)
			return BP_ERR_OUT_OF_MEMORY;
		*indexes->statics = (bpi_statics){0};
	}
	const bpi_scene *movers = NULL;
	const uint64_t t0 = bpi_now_ns();
	bp_status status = scene->unfiltered ? BP_OK : bpi_statics_split(indexes->statics, scene, &movers);
	if (status != BP_OK)
		return status;
	if (!movers) {
		if (indexes->statics)
			bpi_statics_drop_pairs(indexes->statics); // what a split left, charged to the account
		return run_algorithm(indexes, requested, scene, pairs, stats);
	}
	return run_split(indexes, requested, scene, movers, bpi_now_ns() - t0, pairs, stats);
}
