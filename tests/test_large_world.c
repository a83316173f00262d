// SPDX-License-Identifier: MIT
// Large worlds: double bounds 10,000 km from the origin, rounded outward to float. Every
// stored box holds its double box with less than one float ulp of padding per side, and the
// pairs include every pair of the double boxes (brute force in double); an origin moved near
// the boxes shrinks the padding to that of the offsets.
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

enum { N = 500 };

typedef struct dbox {
	double min[3], max[3];
} dbox;

static bool overlap(const dbox *a, const dbox *b)
{
	for (int k = 0; k < 3; ++k)
		if (a->min[k] > b->max[k] || b->min[k] > a->max[k])
			return false;
	return true;
}

static int compare_pairs(const void *x, const void *y)
{
	const bp_pair *p = x, *q = y;
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	return (p->hi > q->hi) - (p->hi < q->hi);
}

/// One float ulp at |v|: the spacing of floats just below or at |v|'s binade.
static double ulp_at(double v)
{
	float f = (float)fabs(v);
	return (double)nextafterf(f, INFINITY) - (double)f;
}

/// Boxes of 1 cm to 4 m in a 20 m cube centred on `centre`; one in four sits against the
/// box before it on x, touching it exactly or 1 mm short.
static void make_boxes(dbox *boxes, const double centre[3], uint64_t seed)
{
	test_rng rng = {seed};
	for (uint32_t i = 0; i < N; ++i) {
		bool against = i > 0 && test_rng_below(&rng, 4) == 0;
		double gap = test_rng_below(&rng, 2) ? 0.0 : 0.001;
		for (int k = 0; k < 3; ++k) {
			double lo = centre[k] + 20.0 * (double)(test_rng_next(&rng) >> 11) / 9007199254740992.0 - 10.0;
			double extent = 0.01 + 4.0 * (double)(test_rng_next(&rng) >> 11) / 9007199254740992.0;
			if (against)
				lo = k == 0 ? boxes[i - 1].max[0] + gap : boxes[i - 1].min[k];
			boxes[i].min[k] = lo;
			boxes[i].max[k] = lo + extent;
		}
	}
}

static void check(const double centre[3], const double origin[3], uint64_t seed)
{
	dbox *boxes = malloc(N * sizeof *boxes);
	make_boxes(boxes, centre, seed);
	bp_world_def def = bp_world_def_default();
	def.thread_count = 1;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	cr_assert_eq(bp_world_set_origin(w, origin), BP_OK);
	double got_origin[3];
	cr_assert_eq(bp_world_origin(w, got_origin), BP_OK);
	cr_assert(got_origin[0] == origin[0] && got_origin[1] == origin[1] && got_origin[2] == origin[2]);
	// Created at the origin, then given their double bounds by handle.
	bp_entity *handles = malloc(N * sizeof *handles);
	bp_entity_def d = bp_entity_def_default();
	for (uint32_t i = 0; i < N; ++i)
		cr_assert_eq(bp_entity_create(w, &d, &handles[i]), BP_OK);
	double *cols = malloc(6 * N * sizeof *cols);
	for (uint32_t i = 0; i < N; ++i)
		for (int k = 0; k < 3; ++k)
			cols[k * N + i] = boxes[i].min[k], cols[(3 + k) * N + i] = boxes[i].max[k];
	bp_bounds_arrays_f64 arrays = {cols, cols + N, cols + 2 * N, cols + 3 * N, cols + 4 * N, cols + 5 * N};
	cr_assert_eq(bp_entities_set_bounds_f64(w, bp_target_handles(N, handles), &arrays), BP_OK, "%s",
		bp_world_last_error(w));

	double worst = 0;
	for (uint32_t i = 0; i < N; ++i) {
		bp_entity_def got;
		cr_assert_eq(bp_entity_get(w, handles[i], &got), BP_OK);
		for (int k = 0; k < 3; ++k) {
			double lo = boxes[i].min[k] - origin[k], hi = boxes[i].max[k] - origin[k];
			cr_assert((double)got.min[k] <= lo && (double)got.max[k] >= hi, "box %u axis %d not held", i, k);
			double pad_lo = lo - (double)got.min[k], pad_hi = (double)got.max[k] - hi;
			cr_assert(pad_lo < ulp_at(lo) && pad_hi < ulp_at(hi), "box %u axis %d: padding %g, %g", i, k, pad_lo,
				pad_hi);
			worst = fmax(worst, fmax(pad_lo, pad_hi));
		}
	}
	cr_assert_lt(worst, 1.0, "at most 1 m at 10,000 km");

	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t count = 0;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	oracle_pairs got = oracle_sorted_copy(pairs, count);
	size_t want = 0;
	for (uint32_t i = 0; i < N; ++i)
		for (uint32_t j = i + 1; j < N; ++j)
			if (overlap(&boxes[i], &boxes[j])) {
				++want;
				bp_pair p = {i, j}; // no destroys: dense index i is box i
				cr_assert_not_null(bsearch(&p, got.data, got.count, sizeof p, compare_pairs),
					"the double boxes %u and %u overlap; the pair is missing", i, j);
			}
	cr_assert_gt(want, N / 10, "the scene has pairs to miss");
	oracle_pairs_free(&got);
	free(cols), free(handles), free(boxes);
	bp_world_destroy(w);
}

Test(large_world, boxes_10000_km_out_never_miss_a_pair)
{
	const double far[3] = {1e7, -1e7, 1e7}, zero[3] = {0, 0, 0};
	check(far, zero, 1);
	check(far, zero, 2);
}

Test(large_world, an_origin_near_the_boxes_shrinks_the_padding)
{
	const double far[3] = {1e7, -1e7, 1e7}, near[3] = {1e7 + 3, -1e7 - 2, 1e7 + 0.5};
	check(far, near, 3); // offsets within 15 m: padding below 2 um
}

Test(large_world, bad_double_bounds_change_nothing)
{
	bp_world_def def = bp_world_def_default();
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity_def d = bp_entity_def_default();
	bp_entity e[2];
	cr_assert_eq(bp_entity_create(w, &d, &e[0]), BP_OK);
	cr_assert_eq(bp_entity_create(w, &d, &e[1]), BP_OK);
	double lo[2] = {1, 2}, hi[2] = {2, NAN}, big[2] = {3, 1e39};
	bp_bounds_arrays_f64 nan_max = {lo, lo, lo, hi, lo, lo}, inverted = {hi, lo, lo, lo, lo, lo};
	bp_bounds_arrays_f64 beyond = {lo, lo, lo, big, big, big};
	cr_assert_eq(bp_entities_set_bounds_f64(w, bp_target_range(0, 2), &nan_max), BP_ERR_NOT_FINITE);
	cr_assert(strstr(bp_world_last_error(w), "bounds[1]: max_x is nan") != NULL, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_entities_set_bounds_f64(w, bp_target_indices(1, (uint32_t[]){1}), &inverted), BP_ERR_INVERTED_BOUNDS);
	cr_assert_eq(bp_entities_set_bounds_f64(w, bp_target_handles(2, e), &beyond), BP_ERR_OUT_OF_RANGE);
	cr_assert(strstr(bp_world_last_error(w), "bounds[1]") != NULL, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_entities_set_bounds_f64(w, bp_target_range(1, 2), &inverted), BP_ERR_OUT_OF_RANGE,
		"range [1, 3) of 2");
	cr_assert_eq(bp_world_set_origin(w, (double[]){0, INFINITY, 0}), BP_ERR_NOT_FINITE);
	for (int i = 0; i < 2; ++i) {
		bp_entity_def got;
		cr_assert_eq(bp_entity_get(w, e[i], &got), BP_OK);
		cr_assert(got.min[0] == 0 && got.max[0] == 0 && got.max[1] == 0, "entity %d changed", i);
	}
	double origin[3] = {7, 7, 7};
	cr_assert_eq(bp_world_origin(w, origin), BP_OK);
	cr_assert(origin[0] == 0 && origin[1] == 0 && origin[2] == 0, "the refused origin was not taken");
	bp_world_destroy(w);
}

/// Hand-worked roundings: exact values stay, others go one float outward, across zero too.
Test(large_world, rounding_is_outward_at_zero_and_on_both_signs)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity_def d = bp_entity_def_default();
	bp_entity e[3];
	for (int i = 0; i < 3; ++i)
		cr_assert_eq(bp_entity_create(w, &d, &e[i]), BP_OK);
	// x: [-1e-50, 1e-50] (both round to zero at nearest), [-0.1, 0.1], [1, 2] (exact).
	double min_x[3] = {-1e-50, -0.1, 1}, max_x[3] = {1e-50, 0.1, 2}, y[3] = {0, 0, 0};
	bp_bounds_arrays_f64 arrays = {min_x, y, NULL, max_x, y, NULL};
	cr_assert_eq(bp_entities_set_bounds_f64(w, bp_target_range(0, 3), &arrays), BP_OK, "%s", bp_world_last_error(w));
	bp_entity_def got[3];
	for (int i = 0; i < 3; ++i)
		cr_assert_eq(bp_entity_get(w, e[i], &got[i]), BP_OK);
	cr_assert(got[0].min[0] == -FLT_TRUE_MIN && got[0].max[0] == FLT_TRUE_MIN, "%a %a", (double)got[0].min[0],
		(double)got[0].max[0]);
	float tenth = 0.1f; // above 0.1 in double
	cr_assert((double)tenth > 0.1);
	cr_assert(got[1].min[0] == -tenth && got[1].max[0] == tenth, "0.1f is already outward on both sides");
	cr_assert(got[2].min[0] == 1 && got[2].max[0] == 2 && got[2].min[1] == 0 && got[2].max[1] == 0, "exact stays");
	// 1/3 is not a float: the two sides land on adjacent floats around it.
	double third = 1.0 / 3.0;
	min_x[0] = max_x[0] = third;
	cr_assert_eq(bp_entities_set_bounds_f64(w, bp_target_range(0, 1), &arrays), BP_OK);
	cr_assert_eq(bp_entity_get(w, e[0], &got[0]), BP_OK);
	cr_assert((double)got[0].min[0] < third && (double)got[0].max[0] > third &&
		  nextafterf(got[0].min[0], INFINITY) == got[0].max[0]);
	bp_world_destroy(w);
}
