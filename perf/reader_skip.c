// SPDX-License-Identifier: MIT
// bp_perf_reader_skip: what the first query of a view costs a reader that skipped frames. N
// uniform 3D boxes all moving by up to 5% of their extent a frame, stepped by bp_frame_step;
// a reader queries 8 small boxes on every K-th view only. Two worlds, interleaved frame by
// frame: query_hierarchy_frames at its default (the builder keeps making the hierarchy for
// frames after a reader used it) and 0 (only the frame after a query). Per world: the median
// and worst first query of a read view, the median of the other queries, and the frame's time.
// CSV: n,threads,skip,keep_frames,first_query_us_median,first_query_us_max,query_us_median,frame_ms_median
#define _POSIX_C_SOURCE 200809L
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdio.h>
#include <string.h>

#include "timing.h"

enum { FRAMES = 25, QUERIES = 8, WORLDS = 2 };

typedef struct subject {
	bp_world *world;
	uint32_t keep_frames;
	double first_us[FRAMES], other_us[FRAMES * QUERIES], frame_ms[FRAMES];
	size_t firsts, others;
} subject;

static bp_world *world_of(const bp_scene *scene, int threads, uint32_t keep_frames)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 3;
	def.thread_count = threads;
	def.query_hierarchy_frames = keep_frames;
	bp_world *w = NULL;
	if (bp_world_create(&def, &w) != BP_OK)
		return NULL;
	bp_bounds_arrays all = bp_scene_frame_bounds(scene, 0);
	const bp_entity_def common = bp_entity_def_default();
	if (bp_world_create_entities(w, scene->count, &all, &common, NULL) != BP_OK) {
		bp_world_destroy(w);
		return NULL;
	}
	return w;
}

static void move(bp_scene *s, uint64_t *rng)
{
	for (uint32_t i = 0; i < s->count; ++i)
		for (int a = 0; a < 3; ++a) {
			*rng = bp_splitmix64(*rng);
			const float d = (float)((double)(*rng >> 11) * 0x1p-53 * 2.0 - 1.0) * 0.05f * (s->max[a][i] - s->min[a][i]);
			s->min[a][i] += d;
			s->max[a][i] += d;
		}
}

/// Eight box queries around scene entities; the first timed apart.
static void read_view(subject *s, const bp_view *v, const bp_scene *scene, uint64_t frame)
{
	uint32_t hits[256];
	for (int q = 0; q < QUERIES; ++q) {
		const uint32_t e = (uint32_t)(bp_splitmix64(frame * QUERIES + (uint64_t)q) % scene->count);
		const float lo[3] = {scene->min[0][e], scene->min[1][e], scene->min[2][e]};
		const float hi[3] = {scene->max[0][e], scene->max[1][e], scene->max[2][e]};
		size_t total = 0;
		const double t0 = now_ms();
		bp_view_overlap_box(v, lo, hi, NULL, hits, 256, &total);
		const double us = (now_ms() - t0) * 1e3;
		if (q == 0)
			s->first_us[s->firsts++] = us;
		else
			s->other_us[s->others++] = us;
	}
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	uint32_t skip = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 2;
	if (n == 0 || threads < 1 || threads > BP_MAX_THREADS || skip < 1) {
		fprintf(stderr, "usage: bp_perf_reader_skip [N] [THREADS] [READ_EVERY_K]\n");
		return 2;
	}
	bp_gen_def gen = bp_gen_def_default();
	gen.n = n;
	bp_scene *scene = NULL;
	if (bp_scene_generate(&gen, &scene) != BP_OK)
		return 1;
	subject subjects[WORLDS] = {{.keep_frames = bp_world_def_default().query_hierarchy_frames}, {.keep_frames = 0}};
	for (int w = 0; w < WORLDS; ++w)
		if (!(subjects[w].world = world_of(scene, threads, subjects[w].keep_frames)))
			return 1;
	uint64_t rng = 1;
	for (uint64_t f = 0; f < FRAMES; ++f) {
		move(scene, &rng);
		for (int w = 0; w < WORLDS; ++w) {
			subject *s = &subjects[w];
			bp_bounds_arrays all = bp_scene_frame_bounds(scene, 0);
			bp_view *v = NULL;
			const double t0 = now_ms();
			if (bp_entities_set_bounds(s->world, bp_target_range(0, n), &all) != BP_OK ||
				bp_frame_step(s->world, &v) != BP_OK)
				return 1;
			s->frame_ms[f] = now_ms() - t0;
			if (f % skip == 0)
				read_view(s, v, scene, f);
			bp_view_release(v);
		}
	}
	printf("n,threads,skip,keep_frames,first_query_us_median,first_query_us_max,query_us_median,frame_ms_median\n");
	for (int w = 0; w < WORLDS; ++w) {
		subject *s = &subjects[w];
		// The first read view has no hierarchy in either world: it is the cold start, left out.
		double worst = 0;
		for (size_t k = 1; k < s->firsts; ++k)
			worst = s->first_us[k] > worst ? s->first_us[k] : worst;
		const double first = median_sorting(s->first_us + 1, s->firsts - 1);
		printf("%u,%d,%u,%u,%.1f,%.1f,%.2f,%.2f\n", n, threads, skip, s->keep_frames, first, worst,
			median_sorting(s->other_us, s->others), median_sorting(s->frame_ms, FRAMES));
		bp_world_destroy(s->world);
	}
	bp_scene_destroy(scene);
	return 0;
}
