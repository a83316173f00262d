// SPDX-License-Identifier: MIT
// The floor of a persistent candidate list for a world where everything moves: the scheme
// of particle codes' neighbour lists with a skin. Every entity keeps a fat box (its bounds
// grown by `margin` extents per side); the pairs of fat boxes, sorted by (lo, hi), are the
// candidates; a step packs the true bounds into 32-byte rows and re-tests every candidate
// in order, which writes the pairs already sorted. An entity whose bounds leave its fat box
// must search again. This driver measures, against a full grid step with sorted pairs on
// the same scene, what such a step cannot go below: the pack, the re-test, and how many
// entities escape per step under a random walk and under steady motion (both up to 5% of
// the extent per axis and step, as bp_perf_incremental moves them). It builds nothing into
// the library; it bounds what an all-moving incremental path could gain on this machine.
#define _POSIX_C_SOURCE 200809L
#include <broadphase/broadphase.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bp_scene.h"
#include "timing.h"

enum { RUNS = 5, MAX_MARGINS = 8 };

typedef struct row {
	float lo[3], hi[3];
	uint32_t pad[2]; ///< 32 bytes: one row never straddles two cache lines
} row;

typedef struct options {
	uint32_t n;
	uint32_t steps;
	float margins[MAX_MARGINS];
	int margin_count;
	const char *csv;
} options;

/// A world of the scene's entities with these bounds, stepped once by grid.
static bp_world *world_of(const bp_scene *s, const bp_bounds_arrays *bounds, bool canonical)
{
	bp_world_def def = bp_world_def_default();
	def.dims = s->dims;
	def.thread_count = 1;
	def.algorithm = BP_ALGO_GRID;
	def.canonical_pairs = canonical;
	def.capacity = s->count;
	bp_world *w = NULL;
	bp_entity_def e = bp_entity_def_default();
	if (bp_world_create(&def, &w) != BP_OK || bp_world_create_entities(w, s->count, bounds, &e, NULL) != BP_OK ||
		bp_world_step(w) != BP_OK) {
		fprintf(stderr, "bp_perf_persistent: cannot step %u entities\n", s->count);
		exit(1);
	}
	return w;
}

/// Median of RUNS steps of a world of the scene as it is now.
static double full_step_ms(const bp_scene *s, bool canonical)
{
	bp_bounds_arrays b = bp_scene_frame_bounds(s, 0);
	bp_world *w = world_of(s, &b, canonical);
	double ms[RUNS];
	for (int r = 0; r < RUNS; ++r) {
		bp_entities_set_bounds(w, bp_target_range(0, s->count), &b); // every entity changed, as in a moving world
		double t0 = now_ms();
		bp_world_step(w);
		ms[r] = now_ms() - t0;
	}
	bp_world_destroy(w);
	return median_sorting(ms, RUNS);
}

static float step_of(uint64_t *rng, float extent)
{
	*rng = bp_splitmix64(*rng);
	float u = (float)(*rng >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
	return 0.05f * u * extent;
}

/// Moves every entity one step: a fresh random step each, or its own velocity.
static void move(bp_scene *s, const float *velocity, uint64_t *rng)
{
	for (int axis = 0; axis < 3; ++axis)
		for (uint32_t i = 0; i < s->count; ++i) {
			float d = velocity ? velocity[(size_t)axis * s->count + i]
					   : step_of(rng, s->max[axis][i] - s->min[axis][i]);
			s->min[axis][i] += d;
			s->max[axis][i] += d;
		}
}

static void pack(const bp_scene *s, row *rows)
{
	for (uint32_t i = 0; i < s->count; ++i)
		for (int axis = 0; axis < 3; ++axis) {
			rows[i].lo[axis] = s->min[axis][i];
			rows[i].hi[axis] = s->max[axis][i];
		}
}

/// The candidates that overlap on the rows, in candidate order, into out.
static size_t retest(const bp_pair *candidates, size_t count, const row *rows, bp_pair *out)
{
	size_t n = 0;
	for (size_t c = 0; c < count; ++c) {
		if (c + 16 < count)
			__builtin_prefetch(&rows[candidates[c + 16].hi]);
		const row *a = &rows[candidates[c].lo], *b = &rows[candidates[c].hi];
		bool hit = (a->lo[0] <= b->hi[0]) & (b->lo[0] <= a->hi[0]) & (a->lo[1] <= b->hi[1]) &
			   (b->lo[1] <= a->hi[1]) & (a->lo[2] <= b->hi[2]) & (b->lo[2] <= a->hi[2]);
		out[n] = candidates[c];
		n += hit;
	}
	return n;
}

/// Entities whose bounds left their fat box (lo/hi arrays of the fat scene); each is
/// counted once, and marked so it is not counted again.
static uint32_t escapes(const bp_scene *s, float *const fat[6], uint8_t *escaped)
{
	uint32_t count = 0;
	for (uint32_t i = 0; i < s->count; ++i) {
		if (escaped[i])
			continue;
		bool out = false;
		for (int axis = 0; axis < 3; ++axis)
			out |= s->min[axis][i] < fat[axis][i] || s->max[axis][i] > fat[3 + axis][i];
		escaped[i] = out;
		count += out;
	}
	return count;
}

static void run_margin(const options *o, const char *motion, float margin, double full_ms, double full_sorted_ms,
	FILE *csv)
{
	bp_gen_def def = bp_gen_def_default();
	def.n = o->n;
	def.dims = 3;
	bp_scene *s = NULL;
	if (bp_scene_generate(&def, &s) != BP_OK)
		exit(1);
	const uint32_t n = s->count;
	float *fat[6];
	for (int k = 0; k < 6; ++k)
		fat[k] = malloc(n * sizeof(float));
	for (int axis = 0; axis < 3; ++axis)
		for (uint32_t i = 0; i < n; ++i) {
			float grow = margin * (s->max[axis][i] - s->min[axis][i]);
			fat[axis][i] = s->min[axis][i] - grow;
			fat[3 + axis][i] = s->max[axis][i] + grow;
		}
	bp_bounds_arrays fat_bounds = {fat[0], fat[1], fat[2], fat[3], fat[4], fat[5]};
	double t0 = now_ms();
	bp_world *w = world_of(s, &fat_bounds, true);
	double build_ms = now_ms() - t0;
	size_t count;
	const bp_pair *candidates = bp_world_pairs(w, &count);
	row *rows = malloc((size_t)n * sizeof *rows);
	bp_pair *out = malloc((count + 1) * sizeof *out);
	uint8_t *escaped = calloc(n, 1);
	float *velocity = NULL;
	uint64_t rng = 12345;
	if (strcmp(motion, "steady") == 0) {
		velocity = malloc(3 * (size_t)n * sizeof(float));
		for (int axis = 0; axis < 3; ++axis)
			for (uint32_t i = 0; i < n; ++i)
				velocity[(size_t)axis * n + i] = step_of(&rng, s->max[axis][i] - s->min[axis][i]);
	}
	double pack_ms[RUNS], retest_ms[RUNS];
	uint32_t first = 0, total = 0;
	size_t pairs = 0;
	for (uint32_t step = 1; step <= o->steps; ++step) {
		move(s, velocity, &rng);
		uint32_t e = escapes(s, fat, escaped);
		first = step == 1 ? e : first;
		total += e;
		if (step > RUNS)
			continue;
		t0 = now_ms();
		pack(s, rows);
		double t1 = now_ms();
		pairs = retest(candidates, count, rows, out);
		pack_ms[step - 1] = t1 - t0;
		retest_ms[step - 1] = now_ms() - t1;
	}
	double p = median_sorting(pack_ms, RUNS), r = median_sorting(retest_ms, RUNS);
	printf("%-6s margin %.2f: %.2f candidates/entity, fat build %.1f ms, pack %.2f ms, re-test %.2f ms "
	       "(%zu pairs), floor %.2f ms = %.2fx faster than full sorted; escaped %.2f%% at step 1, %.1f%% by step %u\n",
		motion, (double)margin, (double)count / n, build_ms, p, r, pairs, p + r, full_sorted_ms / (p + r),
		100.0 * first / n, 100.0 * total / n, o->steps);
	if (csv)
		fprintf(csv, "%s,%u,%.2f,%.3f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%u\n", motion, n, (double)margin,
			(double)count / n, build_ms, p, r, full_ms, full_sorted_ms, full_sorted_ms / (p + r),
			100.0 * first / n, 100.0 * total / n, o->steps);
	bp_world_destroy(w);
	for (int k = 0; k < 6; ++k)
		free(fat[k]);
	free(rows);
	free(out);
	free(escaped);
	free(velocity);
	bp_scene_destroy(s);
}

int main(int argc, char **argv)
{
	options o = {.n = 1000000, .steps = 16, .margins = {0.1f, 0.2f, 0.3f}, .margin_count = 3};
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--n") == 0 && v)
			o.n = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--steps") == 0 && v)
			o.steps = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--csv") == 0 && v)
			o.csv = v;
		else {
			fprintf(stderr, "usage: bp_perf_persistent [--n N] [--steps S] [--csv FILE]\n");
			return 2;
		}
	}
	if (o.n < 2 || o.steps < RUNS) {
		fprintf(stderr, "bp_perf_persistent: --n must be at least 2 and --steps at least %d\n", RUNS);
		return 2;
	}
	FILE *csv = NULL;
	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			fprintf(stderr, "bp_perf_persistent: cannot write %s\n", o.csv);
			return 1;
		}
		fprintf(csv, "motion,n,margin_extents,candidates_per_entity,fat_build_ms,pack_ms,retest_ms,full_ms,"
			     "full_sorted_ms,full_sorted_over_floor,escaped_step1_pct,escaped_by_last_pct,steps\n");
	}
	bp_gen_def def = bp_gen_def_default();
	def.n = o.n;
	def.dims = 3;
	bp_scene *s = NULL;
	if (bp_scene_generate(&def, &s) != BP_OK)
		return 1;
	double full_ms = full_step_ms(s, false), full_sorted_ms = full_step_ms(s, true);
	bp_scene_destroy(s);
	printf("n=%u 1 thread: full grid step %.2f ms, with sorted pairs %.2f ms (medians of %d)\n", o.n, full_ms,
		full_sorted_ms, RUNS);
	const char *motions[2] = {"walk", "steady"};
	for (int m = 0; m < 2; ++m)
		for (int k = 0; k < o.margin_count; ++k)
			run_margin(&o, motions[m], o.margins[k], full_ms, full_sorted_ms, csv);
	if (csv)
		fclose(csv);
	return 0;
}
