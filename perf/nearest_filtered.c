// SPDX-License-Identifier: MIT
// bp_perf_nearest_filtered: a game host's "8 nearest enemies" on the views of a world of S
// static and M moving uniform 3D boxes in two teams, the moving ones moving by up to 5% of
// their extent a frame, stepped by bp_frame_step (an incremental world). Every frame a reader
// asks, for 200 movers, the 8 nearest movers of the other team (kinds BP_QUERY_DYNAMIC and
// the other team's category) and the 8 nearest entities of any kind. Prints per frame the
// median microseconds of each query, and the frame's time.
// CSV: frame,filtered_us_median,unfiltered_us_median,frame_ms
#define _POSIX_C_SOURCE 200809L
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdio.h>
#include <string.h>

#include "timing.h"

enum { FRAMES = 8, ASKERS = 200, K = 8 };

static bp_world *world_of(const bp_scene *scene, uint32_t statics, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 3;
	def.thread_count = threads;
	def.incremental = true;
	bp_world *w = NULL;
	if (bp_world_create(&def, &w) != BP_OK)
		return NULL;
	for (uint32_t i = 0; i < scene->count; ++i) {
		bp_entity_def e = bp_entity_def_default();
		for (int a = 0; a < 3; ++a)
			e.min[a] = scene->min[a][i], e.max[a] = scene->max[a][i];
		e.kind = i < statics ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		e.category = i % 2 ? 2u : 1u; // the two teams
		bp_entity handle;
		if (bp_entity_create(w, &e, &handle) != BP_OK) {
			bp_world_destroy(w);
			return NULL;
		}
	}
	return w;
}

static void move(bp_scene *s, uint32_t first, uint64_t *rng)
{
	for (uint32_t i = first; i < s->count; ++i)
		for (int a = 0; a < 3; ++a) {
			*rng = bp_splitmix64(*rng);
			const float d = (float)((double)(*rng >> 11) * 0x1p-53 * 2.0 - 1.0) * 0.05f * (s->max[a][i] - s->min[a][i]);
			s->min[a][i] += d;
			s->max[a][i] += d;
		}
}

int main(int argc, char **argv)
{
	const uint32_t statics = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000;
	const uint32_t moving = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 10000;
	const int threads = argc > 3 ? atoi(argv[3]) : 1;
	if (moving < ASKERS || threads < 1 || threads > BP_MAX_THREADS) {
		fprintf(stderr, "usage: bp_perf_nearest_filtered [STATIC] [MOVING >= %d] [THREADS]\n", ASKERS);
		return 2;
	}
	bp_gen_def gen = bp_gen_def_default();
	gen.n = statics + moving;
	bp_scene *scene = NULL;
	if (bp_scene_generate(&gen, &scene) != BP_OK)
		return 1;
	bp_world *w = world_of(scene, statics, threads);
	if (!w)
		return 1;
	printf("frame,filtered_us_median,unfiltered_us_median,frame_ms\n");
	uint64_t rng = 5;
	double filtered[ASKERS], unfiltered[ASKERS];
	for (int f = 0; f < FRAMES; ++f) {
		if (f) {
			move(scene, statics, &rng);
			bp_bounds_arrays b = bp_scene_frame_bounds(scene, 0);
			const float **arrays[6] = {&b.min_x, &b.min_y, &b.min_z, &b.max_x, &b.max_y, &b.max_z};
			for (int k = 0; k < 6; ++k)
				*arrays[k] += statics;
			if (bp_entities_set_bounds(w, bp_target_range(statics, moving), &b) != BP_OK)
				return 1;
		}
		bp_view *v = NULL;
		const double t0 = now_ms();
		if (bp_frame_step(w, &v) != BP_OK)
			return 1;
		const double frame_ms = now_ms() - t0;
		for (int q = 0; q < ASKERS; ++q) {
			const uint32_t i = statics + (uint32_t)q * (moving / ASKERS);
			const float p[3] = {scene->min[0][i], scene->min[1][i], scene->min[2][i]};
			bp_query_filter enemies = bp_query_filter_default();
			enemies.kinds = BP_QUERY_DYNAMIC;
			enemies.mask = i % 2 ? 1u : 2u;
			bp_hit hits[K];
			size_t total = 0;
			double t1 = now_ms();
			(void)bp_view_nearest(v, p, K, &enemies, hits, &total);
			filtered[q] = (now_ms() - t1) * 1e3;
			t1 = now_ms();
			(void)bp_view_nearest(v, p, K, NULL, hits, &total);
			unfiltered[q] = (now_ms() - t1) * 1e3;
		}
		printf("%d,%.2f,%.2f,%.2f\n", f + 1, median_sorting(filtered, ASKERS), median_sorting(unfiltered, ASKERS),
			frame_ms);
		bp_view_release(v);
	}
	bp_world_destroy(w);
	bp_scene_destroy(scene);
	return 0;
}
