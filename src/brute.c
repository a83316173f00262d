// SPDX-License-Identifier: MIT
// brute: every pair tested once. The oracle the other algorithms are checked against,
// so it is written to be obviously right, not fast.
#include "index.h"
#include "parallel.h"
#include "probes.h"

// Rows per chunk. Row i costs n - i - 1 tests; small chunks keep threads balanced.
#define BRUTE_GRAIN 32

typedef struct brute_job {
	const bpi_scene *scene;
	bpi_pair_chunks *chunks;
} brute_job;

static void brute_rows(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const brute_job *job = ctx;
	const bpi_scene *s = job->scene;
	bpi_pair_buffer *out = &job->chunks->buffers[chunk];
	for (uint32_t a = begin; a < end; ++a)
		for (uint32_t b = a + 1; b < s->count; ++b)
			if (bpi_scene_overlap(s, a, b) && bpi_scene_accepts(s, a, b))
				bpi_pair_push(out, a, b);
}

static bp_status brute_create(bpi_index **out)
{
	return bpi_index_new(sizeof(bpi_index), &bpi_brute_algorithm, out);
}

static void brute_destroy(bpi_index *index)
{
	bpi_pair_chunks_free(&index->chunks);
	bpi_free(index, sizeof *index);
}

static bp_status brute_find_pairs(bpi_index *index, const bpi_scene *scene, bpi_pair_buffer *out, bp_frame_stats *stats)
{
	uint64_t t0 = bpi_now_ns();
	BPI_MARK_STAGE_NEXT(BPI_STAGE_BUILD, BPI_STAGE_FIND); // brute builds nothing
	bp_status status = bpi_pair_chunks_reset(&index->chunks, bpi_chunk_count(scene->count, BRUTE_GRAIN));
	if (status != BP_OK)
		return status;
	brute_job job = {scene, &index->chunks};
	bpi_parallel_for(scene->count, BRUTE_GRAIN, scene->threads, brute_rows, &job);
	uint64_t t1 = bpi_now_ns();
	BPI_MARK_STAGE_NEXT(BPI_STAGE_FIND, BPI_STAGE_MERGE);
	status = bpi_pair_chunks_merge(&index->chunks, out, scene->threads);
	uint64_t t2 = bpi_now_ns();
	BPI_MARK_STAGE_DONE(BPI_STAGE_MERGE);
	uint64_t n = scene->count;
	stats->candidate_tests = n * (n ? n - 1 : 0) / 2;
	stats->cell_count = 0;
	stats->ns_build = 0;
	stats->ns_find = t1 - t0;
	stats->ns_merge = t2 - t1;
	return status;
}

const bpi_algorithm bpi_brute_algorithm = {
	.id = BP_ALGO_BRUTE,
	.name = "brute",
	.create = brute_create,
	.destroy = brute_destroy,
	.find_pairs = brute_find_pairs,
};
