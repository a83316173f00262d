// SPDX-License-Identifier: MIT
// Scene generators: determinism, ids and bounds, boxprune ranges, motion, and pair
// density measured with brute (a generator check, not a pair-correctness check).
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <bp_scene.h>

#include "oracle.h"

static bp_scene *generate(bp_distribution dist, int dims, uint32_t n, uint64_t seed, uint32_t frames)
{
	bp_gen_def def = bp_gen_def_default();
	def.dist = dist;
	def.dims = dims;
	def.n = n;
	def.seed = seed;
	def.frames = frames;
	bp_scene *s = NULL;
	cr_assert_eq(bp_scene_generate(&def, &s), BP_OK, "%s %dD", bp_distribution_name(dist), dims);
	return s;
}

static bool same_bytes(const bp_scene *a, const bp_scene *b)
{
	if (a->dims != b->dims || a->count != b->count || a->frame_count != b->frame_count)
		return false;
	size_t rows = (size_t)a->count * a->frame_count;
	bool same = memcmp(a->ids, b->ids, a->count * sizeof(uint32_t)) == 0;
	for (int k = 0; k < a->dims; ++k)
		same = same && !memcmp(a->min[k], b->min[k], rows * 4) && !memcmp(a->max[k], b->max[k], rows * 4);
	return same;
}

static size_t brute_pairs(const bp_scene *s, uint32_t frame)
{
	bp_world_def def = bp_world_def_default();
	def.dims = s->dims;
	def.algorithm = BP_ALGO_BRUTE;
	def.thread_count = 2;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_bounds_arrays b = bp_scene_frame_bounds(s, frame);
	bp_entity_def common = bp_entity_def_default();
	cr_assert_eq(bp_world_create_entities(w, s->count, &b, &common, NULL), BP_OK, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t n;
	bp_world_pairs(w, &n);
	bp_world_destroy(w);
	return n;
}

Test(scene_gen, names_round_trip)
{
	const char *names[] = {"uniform", "clustered", "mixed", "line", "boxprune"};
	for (int d = 0; d < BP_DIST_COUNT; ++d) {
		cr_assert_str_eq(bp_distribution_name((bp_distribution)d), names[d]);
		bp_distribution back;
		cr_assert_eq(bp_distribution_from_name(names[d], &back), BP_OK);
		cr_assert_eq(back, (bp_distribution)d);
	}
	bp_distribution out;
	cr_assert_eq(bp_distribution_from_name("Uniform", &out), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_distribution_from_name(NULL, &out), BP_ERR_INVALID_ARGUMENT);
	cr_assert_str_eq(bp_distribution_name(BP_DIST_COUNT), "?");
}

Test(scene_gen, defaults_and_bad_definitions)
{
	bp_gen_def def = bp_gen_def_default();
	cr_assert_eq(def.dist, BP_DIST_UNIFORM);
	cr_assert_eq(def.n, 1000);
	cr_assert_eq(def.dims, 3);
	cr_assert_eq(def.seed, 1);
	cr_assert_eq(def.frames, 1);
	int64_t before = bp_scene_allocated_bytes();
	bp_scene *s = (bp_scene *)&s;
	bp_gen_def bad = def;
	bad.dims = 4;
	cr_assert_eq(bp_scene_generate(&bad, &s), BP_ERR_INVALID_ARGUMENT);
	cr_assert_null(s);
	bad = def;
	bad.frames = 0;
	cr_assert_eq(bp_scene_generate(&bad, &s), BP_ERR_INVALID_ARGUMENT);
	bad = def;
	bad.dist = BP_DIST_COUNT;
	cr_assert_eq(bp_scene_generate(&bad, &s), BP_ERR_INVALID_ARGUMENT);
	bad = def;
	bad.dist = BP_DIST_BOXPRUNE;
	bad.dims = 2; // boxprune is 3D only
	cr_assert_eq(bp_scene_generate(&bad, &s), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_scene_generate(NULL, &s), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_scene_generate(&def, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_scene_allocated_bytes(), before);
	def.n = 0;
	cr_assert_eq(bp_scene_generate(&def, &s), BP_OK);
	cr_assert_eq(s->count, 0);
	bp_scene_destroy(s);
	cr_assert_eq(bp_scene_allocated_bytes(), before);
}

Test(scene_gen, deterministic_ids_and_valid_bounds)
{
	for (int d = 0; d < BP_DIST_COUNT; ++d)
		for (int dims = 2; dims <= 3; ++dims) {
			if (d == BP_DIST_BOXPRUNE && dims == 2)
				continue;
			bp_scene *a = generate((bp_distribution)d, dims, 2000, 7, 3);
			bp_scene *b = generate((bp_distribution)d, dims, 2000, 7, 3);
			bp_scene *c = generate((bp_distribution)d, dims, 2000, 8, 3);
			bp_scene *one = generate((bp_distribution)d, dims, 2000, 7, 1);
			cr_assert(same_bytes(a, b), "%s %dD not deterministic", bp_distribution_name(d), dims);
			cr_assert_not(same_bytes(a, c), "%s %dD ignores the seed", bp_distribution_name(d), dims);
			cr_assert_eq(a->dims, dims);
			cr_assert_eq(a->frame_count, 3);
			cr_assert_eq(dims == 2, a->min[2] == NULL);
			// Frame 0 does not depend on the number of frames.
			for (int k = 0; k < dims; ++k)
				cr_assert_eq(memcmp(a->min[k], one->min[k], 2000 * 4), 0);
			for (uint32_t i = 0; i < a->count; ++i)
				cr_assert_eq(a->ids[i], i);
			for (int k = 0; k < dims; ++k)
				for (size_t r = 0; r < (size_t)a->count * a->frame_count; ++r) {
					cr_assert(isfinite(a->min[k][r]) && isfinite(a->max[k][r]));
					cr_assert_leq(a->min[k][r], a->max[k][r]);
				}
			bp_scene_destroy(a);
			bp_scene_destroy(b);
			bp_scene_destroy(c);
			bp_scene_destroy(one);
		}
}

Test(scene_gen, boxprune_integer_ranges)
{
	bp_scene *s = generate(BP_DIST_BOXPRUNE, 3, 20000, 1, 1);
	float cmin = INFINITY, cmax = -INFINITY, hmax = -INFINITY, hmin = INFINITY;
	for (int k = 0; k < 3; ++k)
		for (uint32_t i = 0; i < s->count; ++i) {
			// min = c - h and max = c + h with small integers: all exact in float.
			float c = (s->min[k][i] + s->max[k][i]) / 2, h = (s->max[k][i] - s->min[k][i]) / 2;
			cr_assert_eq(c, floorf(c), "centre %g not an integer", c);
			cr_assert_eq(h, floorf(h), "half extent %g not an integer", h);
			cmin = fminf(cmin, c);
			cmax = fmaxf(cmax, c);
			hmin = fminf(hmin, h);
			hmax = fmaxf(hmax, h);
		}
	// 60000 draws from 4096 and 128 values: the ends are reached.
	cr_assert_eq(cmin, -2048.0f);
	cr_assert_eq(cmax, 2047.0f);
	cr_assert_eq(hmin, 0.0f);
	cr_assert_eq(hmax, 127.0f);
	bp_scene_destroy(s);
}

// Expected boxprune pairs, worked independently of the generator: per axis, centres
// are uniform over M = 4096 integers and k = ha + hb with ha, hb uniform in [0, 127];
// P(|ca - cb| <= k) = ((2k + 1) M - k (k + 1)) / M^2 (count the pairs of integers within
// k). Axes are independent, so E[pairs] = n (n - 1) / 2 * P^3 (P = 0.0611242; at
// n = 100000 that is 1.1418M, the published ~1.14M).
Test(scene_gen, boxprune_pair_count_matches_the_formula, .timeout = 120)
{
	const double M = 4096.0;
	double sum = 0;
	for (int ha = 0; ha < 128; ++ha)
		for (int hb = 0; hb < 128; ++hb) {
			double k = ha + hb;
			sum += ((2 * k + 1) * M - k * (k + 1)) / (M * M);
		}
	const double p = sum / (128.0 * 128.0);
	const uint32_t n = 10000;
	const double want = n * (n - 1.0) / 2.0 * p * p * p; // 11417
	bp_scene *s = generate(BP_DIST_BOXPRUNE, 3, n, 1, 1);
	double got = (double)brute_pairs(s, 0);
	cr_assert(fabs(got - want) < 0.05 * want, "boxprune pairs %.0f, expected %.0f", got, want);
	bp_scene_destroy(s);
}

// Pairs per entity with brute at n = 5000. Bands: the target +-~20% for uniform and
// line (expected 1.5 exactly by the formulas in scene_gen.c), 5-15 clustered, 2-4 mixed.
Test(scene_gen, pair_density_in_band, .timeout = 300)
{
	const struct {
		bp_distribution dist;
		double lo, hi;
	} bands[] = {
		{BP_DIST_UNIFORM, 1.25, 1.75},
		{BP_DIST_LINE, 1.25, 1.75},
		{BP_DIST_CLUSTERED, 5.0, 15.0},
		{BP_DIST_MIXED, 2.0, 4.0},
	};
	for (size_t b = 0; b < sizeof bands / sizeof bands[0]; ++b)
		for (int dims = 2; dims <= 3; ++dims) {
			bp_scene *s = generate(bands[b].dist, dims, 5000, 3, 2);
			for (uint32_t f = 0; f < 2; ++f) {
				double per = (double)brute_pairs(s, f) / s->count;
				cr_assert(per >= bands[b].lo && per <= bands[b].hi, "%s %dD frame %u: %.3f pairs per entity",
					bp_distribution_name(bands[b].dist), dims, f, per);
			}
			bp_scene_destroy(s);
		}
}

Test(scene_gen, frames_move_a_little_and_keep_extents)
{
	for (int d = 0; d < BP_DIST_COUNT; ++d) {
		bp_scene *s = generate((bp_distribution)d, 3, 1000, 5, 6);
		const size_t n = s->count;
		size_t moved = 0;
		for (int k = 0; k < 3; ++k) {
			float lo = INFINITY, hi = -INFINITY; // box of the frame-0 centres
			for (size_t i = 0; i < n; ++i) {
				float c = (s->min[k][i] + s->max[k][i]) / 2;
				lo = fminf(lo, c);
				hi = fmaxf(hi, c);
			}
			for (uint32_t f = 1; f < s->frame_count; ++f)
				for (size_t i = 0; i < n; ++i) {
					size_t r = f * n + i, q = r - n;
					float ext = s->max[k][i] - s->min[k][i];
					float step = fabsf((s->min[k][r] + s->max[k][r]) / 2 - (s->min[k][q] + s->max[k][q]) / 2);
					float slack = 1e-4f * (1 + fabsf(s->max[k][r]));
					// At most 5% of the extent per frame, same extent, centre inside the box.
					cr_assert_leq(step, 0.05f * ext + slack, "%s frame %u", bp_distribution_name(d), f);
					cr_assert(fabsf((s->max[k][r] - s->min[k][r]) - ext) <= slack);
					float c = (s->min[k][r] + s->max[k][r]) / 2;
					cr_assert(c >= lo - slack && c <= hi + slack);
					moved += step > 0;
				}
		}
		cr_assert_gt(moved, n, "%s barely moves", bp_distribution_name(d));
		bp_scene_destroy(s);
	}
}

// The generator output survives both file forms unchanged.
Test(scene_gen, generated_scenes_round_trip)
{
	int64_t before = bp_scene_allocated_bytes();
	const char *path = "/tmp/bp_test_scene_gen.txt";
	for (int d = 0; d < BP_DIST_COUNT; ++d) {
		bp_scene *s = generate((bp_distribution)d, 3, 500, 11, 2);
		bp_scene *back = NULL;
		bp_scene_error err = {0};
		cr_assert_eq(bp_scene_write_text(s, path, NULL), BP_OK);
		cr_assert_eq(bp_scene_read(path, &back, &err), BP_OK, "%s", err.message);
		cr_assert(same_bytes(s, back));
		bp_scene_destroy(back);
		cr_assert_eq(bp_scene_write_binary(s, path, NULL), BP_OK);
		cr_assert_eq(bp_scene_read(path, &back, &err), BP_OK, "%s", err.message);
		cr_assert(same_bytes(s, back));
		bp_scene_destroy(back);
		bp_scene_destroy(s);
	}
	remove(path);
	cr_assert_eq(bp_scene_allocated_bytes(), before);
}
