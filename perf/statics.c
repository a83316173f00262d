// SPDX-License-Identifier: MIT
// bp_perf_statics: what a plain world's static entities cost its step. Generates a scene
// (uniform or mixed sizes) of N boxes and steps, interleaved frame by frame, plain worlds of:
//   level       the N boxes static: the tree of the static entities, no dynamic one;
//   level_whole the same with BP_DEBUG_NO_STATIC_TREE: the algorithm over every entity;
//   dynamic     the same boxes dynamic: the step that finds their pairs;
//   movers      the N boxes static and M more of them dynamic, moving by up to 5% of their
//               extent a frame, with the tree;
//   movers_whole the same without the tree.
// The first step (the tree's build) is apart; the others give median, mean and worst.
// --only WORLD steps that world alone (to profile it).
// CSV: scene,dims,n,moving,threads,world,first_ms,ms_median,ms_mean,ms_max,pairs,candidate_tests
#define _POSIX_C_SOURCE 200809L
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdio.h>
#include <string.h>

#include "timing.h"

enum { WORLDS = 5, MAX_FRAMES = 101 };

typedef struct options {
	const char *scene, *csv;
	const char *only; ///< one world, for profiling; NULL: all
	uint32_t n, moving, frames;
	int threads;
} options;

typedef struct subject {
	const char *name;
	bp_world *world;
	double first_ms, ms[MAX_FRAMES];
	bp_frame_stats stats;
} subject;

static bool parse(int argc, char **argv, options *o)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];
		if (strcmp(a, "--scene") == 0)
			o->scene = v;
		else if (strcmp(a, "--csv") == 0)
			o->csv = v;
		else if (strcmp(a, "--only") == 0)
			o->only = v;
		else if (strcmp(a, "--n") == 0)
			o->n = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--moving") == 0)
			o->moving = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--frames") == 0)
			o->frames = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--threads") == 0)
			o->threads = atoi(v);
		else
			return false;
	}
	return argc % 2 == 1 && o->n > 0 && o->moving <= o->n && o->frames >= 2 && o->frames <= MAX_FRAMES &&
	       o->threads >= 1 && o->threads <= BP_MAX_THREADS;
}

/// A plain world of scene entities [0, statics) static and [statics, count) dynamic.
static bp_world *world_of(const bp_scene *scene, uint32_t statics, uint32_t count, uint32_t debug_flags,
	const options *o)
{
	bp_world_def def = bp_world_def_default();
	def.dims = scene->dims;
	def.thread_count = o->threads;
	def.debug_flags = debug_flags;
	def.capacity = count;
	bp_world *w = NULL;
	if (bp_world_create(&def, &w) != BP_OK)
		return NULL;
	bp_bounds_arrays all = bp_scene_frame_bounds(scene, 0);
	bp_entity_def e = bp_entity_def_default();
	e.kind = BP_KIND_STATIC;
	bp_status status = statics ? bp_world_create_entities(w, statics, &all, &e, NULL) : BP_OK;
	const float **arrays[6] = {&all.min_x, &all.min_y, &all.min_z, &all.max_x, &all.max_y, &all.max_z};
	for (int k = 0; k < 6; ++k)
		if (*arrays[k])
			*arrays[k] += statics;
	e.kind = BP_KIND_DYNAMIC;
	if (status == BP_OK && count > statics)
		status = bp_world_create_entities(w, count - statics, &all, &e, NULL);
	if (status != BP_OK) {
		fprintf(stderr, "bp_perf_statics: %s\n", bp_world_last_error(w));
		bp_world_destroy(w);
		return NULL;
	}
	return w;
}

/// Moves scene entities [first, count) by up to 5% of their extent on each axis.
static void move(bp_scene *s, uint32_t first, uint64_t *rng)
{
	for (uint32_t i = first; i < s->count; ++i)
		for (int a = 0; a < s->dims; ++a) {
			*rng = bp_splitmix64(*rng);
			const float d = (float)((double)(*rng >> 11) * 0x1p-53 * 2.0 - 1.0) * 0.05f * (s->max[a][i] - s->min[a][i]);
			s->min[a][i] += d;
			s->max[a][i] += d;
		}
}

static bp_status push_moves(bp_world *w, const bp_scene *s, uint32_t first)
{
	if (first == s->count)
		return BP_OK;
	bp_bounds_arrays all = bp_scene_frame_bounds(s, 0);
	const float **arrays[6] = {&all.min_x, &all.min_y, &all.min_z, &all.max_x, &all.max_y, &all.max_z};
	for (int k = 0; k < 6; ++k)
		if (*arrays[k])
			*arrays[k] += first;
	return bp_entities_set_bounds(w, bp_target_range(first, s->count - first), &all);
}

static void report(FILE *csv, const options *o, subject *s)
{
	double mean = 0, most = 0;
	for (uint32_t f = 1; f < o->frames; ++f) {
		mean += s->ms[f];
		most = s->ms[f] > most ? s->ms[f] : most;
	}
	mean /= o->frames - 1;
	const double median = median_sorting(s->ms + 1, o->frames - 1);
	const uint32_t moving = strncmp(s->name, "movers", 6) == 0 ? o->moving : 0;
	fprintf(csv, "%s,3,%u,%u,%d,%s,%.4f,%.4f,%.4f,%.4f,%llu,%llu\n", o->scene, o->n, moving, o->threads, s->name,
		s->first_ms, median, mean, most, (unsigned long long)s->stats.pair_count,
		(unsigned long long)s->stats.candidate_tests);
}

int main(int argc, char **argv)
{
	options o = {.scene = "uniform", .n = 1000000, .moving = 10000, .frames = 11, .threads = 1};
	bp_gen_def gen = bp_gen_def_default();
	if (!parse(argc, argv, &o) || bp_distribution_from_name(o.scene, &gen.dist) != BP_OK) {
		fprintf(stderr, "usage: bp_perf_statics [--scene uniform|mixed|...] [--n N] [--moving M] [--frames 2..%d]"
				" [--threads T] [--only WORLD] [--csv FILE]\n",
			MAX_FRAMES);
		return 2;
	}
	gen.n = o.n + o.moving;
	bp_scene *scene = NULL;
	if (bp_scene_generate(&gen, &scene) != BP_OK)
		return 1;
	const uint32_t all = o.n + o.moving;
	subject subjects[WORLDS] = {
		{.name = "level", .world = world_of(scene, o.n, o.n, 0, &o)},
		{.name = "level_whole", .world = world_of(scene, o.n, o.n, BP_DEBUG_NO_STATIC_TREE, &o)},
		{.name = "dynamic", .world = world_of(scene, 0, o.n, 0, &o)},
		{.name = "movers", .world = world_of(scene, o.n, all, 0, &o)},
		{.name = "movers_whole", .world = world_of(scene, o.n, all, BP_DEBUG_NO_STATIC_TREE, &o)},
	};
	for (int w = 0; w < WORLDS; ++w) {
		if (!subjects[w].world)
			return 1;
		if (o.only && strcmp(o.only, subjects[w].name) != 0) {
			bp_world_destroy(subjects[w].world);
			subjects[w].world = NULL;
		}
	}
	uint64_t rng = 1;
	bp_status status = BP_OK;
	for (uint32_t f = 0; f < o.frames && status == BP_OK; ++f) {
		if (f)
			move(scene, o.n, &rng);
		for (int w = 0; w < WORLDS && status == BP_OK; ++w) {
			subject *s = &subjects[w];
			if (!s->world)
				continue;
			const bool moves = strncmp(s->name, "movers", 6) == 0;
			if (f && moves)
				status = push_moves(s->world, scene, o.n);
			const double t0 = now_ms();
			if (status == BP_OK)
				status = bp_world_step(s->world);
			s->ms[f] = now_ms() - t0;
			s->stats = bp_world_stats(s->world);
			if (!f)
				s->first_ms = s->ms[0];
		}
	}
	if (status != BP_OK) {
		fprintf(stderr, "bp_perf_statics: step failed: %s\n", bp_status_string(status));
		return 1;
	}
	FILE *csv = o.csv ? fopen(o.csv, "a") : stdout;
	if (!csv)
		return 1;
	if (!o.csv || ftell(csv) == 0)
		fprintf(csv, "scene,dims,n,moving,threads,world,first_ms,ms_median,ms_mean,ms_max,pairs,candidate_tests\n");
	for (int w = 0; w < WORLDS; ++w)
		if (subjects[w].world)
			report(csv, &o, &subjects[w]);
	if (csv != stdout)
		fclose(csv);
	for (int w = 0; w < WORLDS; ++w)
		bp_world_destroy(subjects[w].world);
	bp_scene_destroy(scene);
	return 0;
}
