// SPDX-License-Identifier: MIT
// brute: every pair tested once. The oracle the other algorithms are checked against,
// so it is written to be obviously right, not fast.
#include "algorithms/index.h"
#include "parallel/parallel.h"

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
	if (bpi_pair_buffer_stopped(out))
		return; // the step ran out of memory in another chunk
	for (uint32_t a = begin; a < end && !out->failed; ++a)
		for (uint32_t b = a + 1; b < s->count; ++b)
			if (bpi_scene_overlap(s, a, b) && bpi_scene_accepts(s, a, b))
				bpi_pair_push(out, a, b);
	uint64_t n = s->count; // rows [begin, end) test n - a - 1 pairs each
	out->tests = (end - begin) * (2 * n - begin - end - 1) / 2;
}

static bp_status brute_build(bpi_index *index, const bpi_scene *scene, bpi_build *build)
{
	(void)index; // brute builds nothing
	build->chunks = bpi_chunk_count(scene->count, BRUTE_GRAIN);
	return BP_OK;
}

static bp_status brute_find(bpi_index *index, const bpi_scene *scene, bpi_build *build)
{
	(void)build;
	brute_job job = {scene, &index->chunks};
	bpi_parallel_for(scene->count, BRUTE_GRAIN, scene->threads, brute_rows, &job);
	return BP_OK;
}

const bpi_algorithm bpi_brute_algorithm = {
	.name = "brute",
	.index_size = sizeof(bpi_index),
	.build = brute_build,
	.find = brute_find,
};
