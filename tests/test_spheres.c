// SPDX-License-Identifier: MIT
// Sphere entities: hand-worked pairs, every algorithm against the oracle on mixed
// sphere/box scenes, the sphere calls' errors, and spheres in a periodic world.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

static oracle_box sphere(float x, float y, float z, float r)
{
	return (oracle_box){{x - r, y - r, z - r}, {x + r, y + r, z + r}, 1, UINT64_MAX, false, true};
}

static oracle_box box(float x0, float y0, float z0, float x1, float y1, float z1)
{
	return (oracle_box){{x0, y0, z0}, {x1, y1, z1}, 1, UINT64_MAX, false, false};
}

/// Steps every available algorithm at threads 1, 2, 3 and 8; each must equal the
/// oracle and give the same list at every thread count.
static void check_every_algorithm(const oracle_box *boxes, uint32_t n, int dims, const char *what)
{
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	static const int thread_counts[] = {1, 2, 3, 8};
	for (int a = BP_ALGO_AUTO; a < BP_ALGO_COUNT; ++a) {
		if (!bp_algorithm_available((bp_algorithm)a))
			continue;
		bp_pair *first = NULL;
		size_t first_count = 0;
		for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; ++t) {
			bp_world *w = test_world_from_boxes(boxes, n, dims, (bp_algorithm)a, thread_counts[t]);
			cr_assert_eq(bp_world_step(w), BP_OK, "%s %s: %s", what, bp_algorithm_name((bp_algorithm)a),
				bp_world_last_error(w));
			size_t count;
			const bp_pair *pairs = bp_world_pairs(w, &count);
			cr_assert(oracle_same_pair_set(pairs, count, &want), "%s: %s with %d threads", what,
				bp_algorithm_name((bp_algorithm)a), thread_counts[t]);
			if (!first) {
				first_count = count;
				first = malloc((count ? count : 1) * sizeof *first);
				memcpy(first, pairs, count * sizeof *first);
			} else {
				cr_assert_eq(count, first_count);
				cr_assert_arr_eq(pairs, first, count * sizeof *first, "%s: %s order differs at %d threads", what,
					bp_algorithm_name((bp_algorithm)a), thread_counts[t]);
			}
			bp_world_destroy(w);
		}
		free(first);
	}
	oracle_pairs_free(&want);
}

static size_t pair_count(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm)
{
	bp_world *w = test_world_from_boxes(boxes, n, dims, algorithm, 1);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	size_t count;
	bp_world_pairs(w, &count);
	bp_world_destroy(w);
	return count;
}

Test(spheres, diagonal_neighbours_whose_boxes_overlap_do_not_pair, .timeout = 60)
{
	// Unit spheres at (0,0) and (1.5,1.5): the boxes [-1,1] and [0.5,2.5] overlap on
	// both axes, but the centres are 1.5*sqrt(2) = 2.12 apart, more than 1 + 1.
	oracle_box s[2] = {sphere(0, 0, 0, 1), sphere(1.5f, 1.5f, 0, 1)};
	for (int a = BP_ALGO_BRUTE; a < BP_ALGO_COUNT; ++a)
		if (bp_algorithm_available((bp_algorithm)a))
			cr_assert_eq(pair_count(s, 2, 2, (bp_algorithm)a), 0, "%s", bp_algorithm_name((bp_algorithm)a));
	// As boxes they pair.
	s[0].is_sphere = s[1].is_sphere = false;
	cr_assert_eq(pair_count(s, 2, 2, BP_ALGO_BRUTE), 1);
}

Test(spheres, touching_spheres_pair, .timeout = 60)
{
	// Centres (0,0,0) and (2,0,0), radius 1: distance 2 = 1 + 1, closed like boxes.
	// Every value here is exact in float and double.
	oracle_box s[2] = {sphere(0, 0, 0, 1), sphere(2, 0, 0, 1)};
	cr_assert_eq(pair_count(s, 2, 3, BP_ALGO_BRUTE), 1);
	s[1] = sphere(2.0f + 0x1p-20f, 0, 0, 1); // just apart
	cr_assert_eq(pair_count(s, 2, 3, BP_ALGO_BRUTE), 0);
}

Test(spheres, sphere_and_box_corner, .timeout = 60)
{
	// Box [1,2]^2 and a sphere of radius 1 at the origin: the box's closest point is
	// its corner (1,1), sqrt(2) = 1.41 away, so no pair although the sphere's box
	// [-1,1]^2 touches the box's corner. Radius 1.5 reaches the corner: a pair.
	oracle_box s[2] = {sphere(0, 0, 0, 1), box(1, 1, 0, 2, 2, 0)};
	cr_assert_eq(pair_count(s, 2, 2, BP_ALGO_BRUTE), 0);
	s[0] = sphere(0, 0, 0, 1.5f);
	cr_assert_eq(pair_count(s, 2, 2, BP_ALGO_BRUTE), 1);
	// Radius 1 against a box straight across the x axis, [1,2] x [-5,5]: the
	// closest point (1,0) is exactly 1 away: a pair.
	s[0] = sphere(0, 0, 0, 1);
	s[1] = box(1, -5, 0, 2, 5, 0);
	cr_assert_eq(pair_count(s, 2, 2, BP_ALGO_BRUTE), 1);
}

Test(spheres, mixed_scenes_every_algorithm, .timeout = 240)
{
	const uint32_t n = 1500;
	oracle_box *boxes = malloc(n * sizeof *boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint64_t seed = 1; seed <= 3; ++seed) {
			int percent = seed == 1 ? 100 : 50;
			test_random_spheres(boxes, n, dims, 100.0f, dims == 2 ? 2.5f : 6.0f, percent, seed * 31 + (uint64_t)dims);
			char what[64];
			snprintf(what, sizeof what, "dims=%d seed=%llu spheres=%d%%", dims, (unsigned long long)seed, percent);
			check_every_algorithm(boxes, n, dims, what);
		}
	}
	free(boxes);
}

Test(spheres, spheres_with_filters_and_static, .timeout = 120)
{
	const uint32_t n = 800;
	oracle_box *boxes = malloc(n * sizeof *boxes);
	test_random_spheres(boxes, n, 3, 60.0f, 5.0f, 60, 99);
	test_rng rng = {5};
	for (uint32_t i = 0; i < n; ++i) {
		boxes[i].category = test_layer(test_rng_below(&rng, 3));
		boxes[i].mask = (uint32_t)test_rng_next(&rng) | 1u;
		boxes[i].is_static = test_rng_below(&rng, 4) == 0;
	}
	check_every_algorithm(boxes, n, 3, "filters");
	free(boxes);
}

Test(spheres, set_sphere_and_shape_round_trip, .timeout = 30)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 3;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity_def e = bp_entity_def_default();
	bp_entity a, b;
	cr_assert_eq(bp_entity_create(w, &e, &a), BP_OK);
	cr_assert_eq(bp_entity_create(w, &e, &b), BP_OK);
	const float ca[3] = {0, 0, 0}, cb[3] = {1.5f, 1.5f, 1.5f};
	cr_assert_eq(bp_entity_set_sphere(w, a, ca, 1.0f), BP_OK);
	cr_assert_eq(bp_entity_set_sphere(w, b, cb, 1.0f), BP_OK);
	bp_entity_def got;
	cr_assert_eq(bp_entity_get(w, b, &got), BP_OK);
	cr_assert_eq(got.shape, BP_SHAPE_SPHERE);
	cr_assert_float_eq(got.min[0], 0.5f, 0.0f);
	cr_assert_float_eq(got.max[2], 2.5f, 0.0f);
	// Centres 1.5*sqrt(3) = 2.6 apart > 2: no pair as spheres, a pair as boxes.
	size_t count;
	cr_assert_eq(bp_world_step(w), BP_OK);
	bp_world_pairs(w, &count);
	cr_assert_eq(count, 0);
	cr_assert_eq(bp_entity_set_shape(w, b, BP_SHAPE_BOX), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	bp_world_pairs(w, &count);
	cr_assert_eq(count, 1, "a box [0.5, 2.5]^3 against the unit sphere's nearest corner 0.87 away");
	bp_world_destroy(w);
}

Test(spheres, bad_spheres_change_nothing, .timeout = 30)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity_def e = bp_entity_def_default();
	bp_entity handles[4];
	for (int i = 0; i < 4; ++i)
		cr_assert_eq(bp_entity_create(w, &e, &handles[i]), BP_OK);
	const float c[2] = {1, 1}, far[2] = {3e38f, 0};
	cr_assert_eq(bp_entity_set_sphere(w, handles[0], c, -1.0f), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_entity_set_sphere(w, handles[0], c, NAN), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_entity_set_sphere(w, handles[0], far, 3e38f), BP_ERR_NOT_FINITE, "3e38 + 3e38 overflows");
	cr_assert_eq(bp_entity_set_shape(w, handles[0], (bp_shape)7), BP_ERR_INVALID_ARGUMENT);
	cr_assert_str_neq(bp_world_last_error(w), "");

	// Bulk: the bad radius at index 2 rejects all four; nothing changes.
	float x[4] = {0, 1, 2, 3}, y[4] = {0, 0, 0, 0}, r[4] = {1, 1, -2, 1};
	bp_sphere_arrays arrays = {x, y, NULL, r};
	cr_assert_eq(bp_entities_set_spheres(w, bp_target_range(0, 4), &arrays), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_last_error(w), "spheres[2]") != NULL, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_entities_set_spheres(w, bp_target_range(2, 3), &arrays), BP_ERR_OUT_OF_RANGE);
	for (int i = 0; i < 4; ++i) {
		bp_entity_def got;
		cr_assert_eq(bp_entity_get(w, handles[i], &got), BP_OK);
		cr_assert_eq(got.shape, BP_SHAPE_BOX);
		cr_assert_float_eq(got.max[0], 0.0f, 0.0f);
	}
	// Fixed, it applies: unit spheres 1 apart along x pair with their neighbours only.
	r[2] = 0.5f;
	cr_assert_eq(bp_entities_set_spheres(w, bp_target_range(0, 4), &arrays), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t count;
	bp_world_pairs(w, &count);
	// Radii 1,1,0.5,1 at x = 0..3: (0,1) 1 <= 2, (0,2) 2 <= 1.5 no, (1,2) 1 <= 1.5,
	// (1,3) 2 <= 2, (2,3) 1 <= 1.5, (0,3) 3 > 2: four pairs.
	cr_assert_eq(count, 4);
	bp_world_destroy(w);
}

Test(spheres, destroying_spheres_returns_to_the_box_fast_path, .timeout = 30)
{
	// Two unit spheres on a diagonal do not pair; destroy the second and create a box
	// in its place: the box's bounds pair with the first sphere's closest point.
	oracle_box s[2] = {sphere(0, 0, 0, 1), sphere(1.5f, 1.5f, 0, 1)};
	bp_world *w = test_world_from_boxes(s, 2, 2, BP_ALGO_GRID, 1);
	bp_entity second = bp_world_entity_at(w, 1);
	cr_assert_eq(bp_entity_destroy(w, second), BP_OK);
	bp_entity_def e = bp_entity_def_default();
	e.min[0] = e.min[1] = 0.5f;
	e.max[0] = e.max[1] = 2.5f;
	bp_entity h;
	cr_assert_eq(bp_entity_create(w, &e, &h), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t count;
	bp_world_pairs(w, &count);
	// Closest point of [0.5,2.5]^2 to the origin is (0.5,0.5), 0.71 away < 1.
	cr_assert_eq(count, 1);
	bp_world_destroy(w);
}

/// Minimum-image sphere pairs in a periodic box: an independent oracle that
/// shifts the other centre by -period, 0 or +period per axis and keeps the nearest.
static size_t periodic_sphere_oracle(const oracle_box *s, uint32_t n, int dims, float period)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i) {
		for (uint32_t j = i + 1; j < n; ++j) {
			double d2 = 0, ri = (s[i].max[0] - s[i].min[0]) / 2.0, rj = (s[j].max[0] - s[j].min[0]) / 2.0;
			for (int k = 0; k < dims; ++k) {
				double d = fabs((s[i].min[k] + s[i].max[k]) / 2.0 - (s[j].min[k] + s[j].max[k]) / 2.0);
				d = fmin(d, period - d);
				d2 += d * d;
			}
			count += d2 <= (ri + rj) * (ri + rj);
		}
	}
	return count;
}

Test(spheres, periodic_world_minimum_image, .timeout = 120)
{
	const uint32_t n = 600;
	const float period = 50.0f;
	oracle_box *s = malloc(n * sizeof *s);
	for (int dims = 2; dims <= 3; ++dims) {
		test_random_spheres(s, n, dims, period, 3.0f, 100, 7 + (uint64_t)dims);
		// Centres in [0, period): spheres near a face wrap around it.
		size_t want = periodic_sphere_oracle(s, n, dims, period);
		cr_assert_gt(want, 0);
		for (int a = BP_ALGO_BRUTE; a < BP_ALGO_COUNT; ++a) {
			if (!bp_algorithm_available((bp_algorithm)a))
				continue;
			bp_world_def def = bp_world_def_default();
			def.dims = dims;
			def.algorithm = (bp_algorithm)a;
			def.periodic = true;
			def.period[0] = def.period[1] = def.period[2] = period;
			bp_world *w = test_world_from_def(s, n, &def);
			cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
			size_t count;
			bp_world_pairs(w, &count);
			cr_assert_eq(count, want, "dims=%d %s", dims, bp_algorithm_name((bp_algorithm)a));
			bp_world_destroy(w);
		}
	}
	free(s);
}
