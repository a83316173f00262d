// SPDX-License-Identifier: MIT
// Periodic (toroidal) worlds: every algorithm and thread count against a minimum-image
// brute-force oracle (tests/common/oracle.c), hand-worked seam cases, and the error contract.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

// ---- scenes --------------------------------------------------------------

/// Random boxes for the torus `period`, every bound a multiple of 1/8 below
/// 2^11 (with periods that are multiples of 1/8 too), so float holds each
/// exactly and neither the library nor the oracle rounds. Extents up to max_fraction * period
/// (exactly period / 2 now and then), minima anywhere in [-6P, 6P], a third of
/// them placed against a seam (touching it exactly, or crossing it by a few
/// eighths), and random filters and static kinds.
static void periodic_boxes(oracle_box *boxes, uint32_t n, int dims, const float period[3], float max_fraction,
	uint64_t seed)
{
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &boxes[i];
		*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int axis = 0; axis < dims; ++axis) {
			int p8 = (int)(period[axis] * 8.0f); // period in eighths
			int e8_max = (int)(period[axis] * max_fraction * 8.0f);
			int e8 = test_rng_below(&rng, 8) == 0 ? p8 / 2 : (int)test_rng_below(&rng, (uint32_t)e8_max + 1);
			int wrap = (int)test_rng_below(&rng, 13) - 6; // which copy of the cell
			int m8;
			switch (test_rng_below(&rng, 3)) {
			case 0: // max on a seam, or a few eighths either side of it
				m8 = wrap * p8 - e8 + (int)test_rng_below(&rng, 9) - 4;
				break;
			case 1: // min on a seam, or a few eighths either side of it
				m8 = wrap * p8 + (int)test_rng_below(&rng, 9) - 4;
				break;
			default:
				m8 = wrap * p8 + (int)test_rng_below(&rng, (uint32_t)p8);
				break;
			}
			b->min[axis] = (float)m8 / 8.0f;
			b->max[axis] = (float)(m8 + e8) / 8.0f;
		}
		if (test_rng_below(&rng, 4) == 0) {
			b->category = test_layer(test_rng_below(&rng, 3));
			b->mask = test_layers(test_rng_below(&rng, 8));
		}
		b->is_static = test_rng_below(&rng, 5) == 0;
	}
}

static bp_world *periodic_world(const oracle_box *boxes, uint32_t n, int dims, const float period[3],
	bp_algorithm algorithm, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.algorithm = algorithm;
	def.thread_count = threads;
	def.periodic = true;
	memcpy(def.period, period, sizeof def.period);
	return test_world_from_def(boxes, n, &def);
}

/// Steps the world and checks its pairs are the oracle's, in (lo, hi) order.
/// Returns a malloc'd copy of the list (for the cross-thread comparison).
static bp_pair *step_and_check(bp_world *w, const oracle_pairs *want, const char *what)
{
	cr_assert_eq(bp_world_step(w), BP_OK, "%s: %s", what, bp_world_last_error(w));
	size_t count = 0;
	const bp_pair *got = bp_world_pairs(w, &count);
	if (count != want->count || (count && memcmp(got, want->data, count * sizeof *got) != 0)) {
		oracle_same_pair_set(got, count, want); // prints the first difference
		cr_assert_fail("%s: %zu pairs, oracle %zu (or same count, other pairs or order)", what, count, want->count);
	}
	bp_frame_stats stats = bp_world_stats(w);
	cr_assert_eq(stats.entity_count, bp_world_entity_count(w), "%s", what);
	cr_assert_eq(stats.pair_count, count, "%s", what);
	bp_pair *copy = malloc((count + 1) * sizeof *copy);
	cr_assert_not_null(copy);
	if (count)
		memcpy(copy, got, count * sizeof *copy);
	return copy;
}

// ---- every algorithm x thread count against the oracle ------------------

typedef struct random_case {
	int dims;
	uint32_t n;
	float max_fraction;
	uint64_t seed;
} random_case;

static const int thread_counts[] = {1, 2, 3, 8};

static void check_all_algorithms(const oracle_box *boxes, uint32_t n, int dims, const float period[3],
	const char *scene_name)
{
	oracle_pairs want = oracle_find_periodic_pairs(boxes, n, dims, period);
	for (int a = BP_ALGO_AUTO; a < BP_ALGO_COUNT; ++a) {
		if (!bp_algorithm_available((bp_algorithm)a))
			continue;
		bp_pair *first = NULL;
		size_t first_count = 0;
		for (size_t t = 0; t < sizeof thread_counts / sizeof *thread_counts; ++t) {
			char what[160];
			snprintf(what, sizeof what, "%s algo=%s threads=%d", scene_name, bp_algorithm_name((bp_algorithm)a),
				thread_counts[t]);
			bp_world *w = periodic_world(boxes, n, dims, period, (bp_algorithm)a, thread_counts[t]);
			// Two steps: the second reuses every scratch array.
			free(step_and_check(w, &want, what));
			bp_pair *got = step_and_check(w, &want, what);
			size_t count = 0;
			bp_world_pairs(w, &count);
			if (!first) {
				first = got, first_count = count;
			} else {
				cr_assert_eq(count, first_count, "%s", what);
				cr_assert_eq(memcmp(got, first, count * sizeof *got), 0, "%s: not byte-identical", what);
				free(got);
			}
			bp_world_destroy(w);
		}
		free(first);
	}
	oracle_pairs_free(&want);
}

ParameterizedTestParameters(periodic, random_scenes)
{
	static random_case cases[48];
	size_t count = 0;
	static const uint32_t sizes[] = {1, 2, 7, 60, 250, 400};
	for (int dims = 2; dims <= 3; ++dims)
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
			for (int v = 0; v < 4; ++v)
				cases[count++] = (random_case){dims, sizes[s], v < 2 ? 0.0625f : 0.5f,
					(uint64_t)(1000 * dims + 10 * s + (size_t)v)};
	return cr_make_param_array(random_case, cases, count);
}

ParameterizedTest(random_case *c, periodic, random_scenes, .timeout = 300)
{
	// Different periods per axis, one of them not a power of two.
	const float period[3] = {64.0f, 100.0f, 37.5f};
	oracle_box *boxes = calloc(c->n, sizeof *boxes);
	periodic_boxes(boxes, c->n, c->dims, period, c->max_fraction, c->seed);
	char name[96];
	snprintf(name, sizeof name, "dims=%d n=%u extent<=%gP seed=%llu", c->dims, c->n, (double)c->max_fraction,
		(unsigned long long)c->seed);
	check_all_algorithms(boxes, c->n, c->dims, period, name);
	free(boxes);
}

/// Enough entities for several chunks of the normalize pass and a radix sort of
/// the mapped pairs that is not the small-input path.
Test(periodic, many_entities_several_chunks, .timeout = 600)
{
	for (int dims = 2; dims <= 3; ++dims) {
		const float period[3] = {256.0f, 200.0f, 128.0f};
		uint32_t n = 9000;
		oracle_box *boxes = calloc(n, sizeof *boxes);
		periodic_boxes(boxes, n, dims, period, dims == 2 ? 0.03125f : 0.0625f, 77 + (uint64_t)dims);
		oracle_pairs want = oracle_find_periodic_pairs(boxes, n, dims, period);
		cr_assert_gt(want.count, 1000u, "the scene should be dense enough to test the sort");
		for (int a = BP_ALGO_BRUTE; a < BP_ALGO_COUNT; ++a) {
			if (!bp_algorithm_available((bp_algorithm)a))
				continue;
			bp_pair *first = NULL;
			for (int threads = 1; threads <= 8; threads += 7) {
				char what[96];
				snprintf(what, sizeof what, "dims=%d algo=%s threads=%d", dims, bp_algorithm_name((bp_algorithm)a),
					threads);
				bp_world *w = periodic_world(boxes, n, dims, period, (bp_algorithm)a, threads);
				bp_pair *got = step_and_check(w, &want, what);
				if (first) {
					cr_assert_eq(memcmp(got, first, want.count * sizeof *got), 0, "%s", what);
					free(got);
				} else {
					first = got;
				}
				bp_world_destroy(w);
			}
			free(first);
		}
		oracle_pairs_free(&want);
		free(boxes);
	}
}

// ---- hand-worked cases ---------------------------------------------------

static oracle_box box2(float x0, float y0, float x1, float y1)
{
	return (oracle_box){.min = {x0, y0, 0}, .max = {x1, y1, 0}, .category = 1, .mask = UINT64_MAX};
}

static oracle_box box3(float x0, float y0, float z0, float x1, float y1, float z1)
{
	return (oracle_box){.min = {x0, y0, z0}, .max = {x1, y1, z1}, .category = 1, .mask = UINT64_MAX};
}

/// Steps with every algorithm and 1 and 3 threads; the pairs must be exactly
/// `want` (the hand-worked answer, sorted), and the oracle must agree too.
static void expect_pairs(const oracle_box *boxes, uint32_t n, int dims, const float period[3], const bp_pair *want,
	size_t want_count)
{
	oracle_pairs oracle = oracle_find_periodic_pairs(boxes, n, dims, period);
	cr_assert_eq(oracle.count, want_count, "the oracle disagrees with the hand-worked answer");
	cr_assert(want_count == 0 || memcmp(oracle.data, want, want_count * sizeof *want) == 0,
		"the oracle disagrees with the hand-worked answer");
	oracle_pairs_free(&oracle);
	oracle_pairs expected = {(bp_pair *)want, want_count};
	for (int a = BP_ALGO_AUTO; a < BP_ALGO_COUNT; ++a)
		for (int threads = 1; threads <= 3; threads += 2) {
			if (!bp_algorithm_available((bp_algorithm)a))
				continue;
			char what[64];
			snprintf(what, sizeof what, "algo=%s threads=%d", bp_algorithm_name((bp_algorithm)a), threads);
			bp_world *w = periodic_world(boxes, n, dims, period, (bp_algorithm)a, threads);
			free(step_and_check(w, &expected, what));
			bp_world_destroy(w);
		}
}

Test(periodic, touching_across_the_seam, .timeout = 60)
{
	const float period[3] = {10, 10, 10};
	// 0 = [9, 10] x [0, 1] and 1 = [0, 1] x [0, 1]: x intervals touch at 10 = 0
	// after moving 1 by +10. 2 = [3, 4]^2 is far from both. 3 = [-1, 0] x
	// [9.5, 10]: x is 0's interval moved by -10; y [9.5, 10] = [-0.5, 0] touches
	// y [0, 1] at 0, so 3 pairs with 0, and with 1 (x touch at 0 directly). 4 = [1.125, 2] x [0, 1]: 1/8 away from 1,
	// and from 0's far side (0 spans x 9..10 = -1..0).
	oracle_box boxes[] = {
		box2(9, 0, 10, 1),
		box2(0, 0, 1, 1),
		box2(3, 3, 4, 4),
		box2(-1, 9.5f, 0, 10),
		box2(1.125f, 0, 2, 1),
	};
	const bp_pair want[] = {{0, 1}, {0, 3}, {1, 3}};
	expect_pairs(boxes, 5, 2, period, want, 3);
}

Test(periodic, positions_far_outside_the_cell, .timeout = 60)
{
	const float period[3] = {10, 10, 10};
	// 0 = [-55, -54] x [0, 1]: -55 = -5.5 * 10 reduces to [5, 6]; it touches
	// 1 = [6, 7] x [20, 21] (y reduces to [0, 1]); 2 = [6.125, 7] x [0, 1] misses
	// 0 by 1/8 but overlaps 1; 3 = [1005, 1006] x [-1000, -999] is 0 again.
	oracle_box boxes[] = {
		box2(-55, 0, -54, 1),
		box2(6, 20, 7, 21),
		box2(6.125f, 0, 7, 1),
		box2(1005, -1000, 1006, -999),
	};
	const bp_pair want[] = {{0, 1}, {0, 3}, {1, 2}, {1, 3}};
	expect_pairs(boxes, 4, 2, period, want, 4);
}

Test(periodic, corners_edges_and_mixed_shifts_3d, .timeout = 60)
{
	const float period[3] = {10, 10, 10};
	// 0 straddles the corner (x, y, z all [9.5, 10.5] = [-0.5, 0.5]).
	// 1 = [0, 0.25]^3 sits in the opposite corner: overlaps 0 with shifts on all
	//   three axes.
	// 2 = x [9.25, 9.5], y [0.5, 0.75], z [9, 9.5]: touches 0 on x (9.5) and z
	//   (9.5) unshifted, on y at 0.5 after the shift.
	// 3 = x [0, 0.5], y [9.75, 10.25], z [3, 4] and 4 = x [9.5, 10.5], y [0, 0.5],
	//   z [3.5, 5]: x needs 4 moved by -10, y needs 3 moved by -10 (two ghosts of
	//   different boxes meet). 3 and 0: z [3, 4] vs [-0.5, 0.5] miss. 4 and 0: z
	//   misses too.
	// 1 and 2: x [0, 0.25] vs [9.25, 9.5] = [-0.75, -0.5]: miss. 1 and 3: z miss.
	// 2 and 3, 2 and 4: z [9, 9.5] vs [3, 5]: miss. 1 and 4: z miss.
	oracle_box boxes[] = {
		box3(9.5f, 9.5f, 9.5f, 10.5f, 10.5f, 10.5f),
		box3(0, 0, 0, 0.25f, 0.25f, 0.25f),
		box3(9.25f, 0.5f, 9, 9.5f, 0.75f, 9.5f),
		box3(0, 9.75f, 3, 0.5f, 10.25f, 4),
		box3(9.5f, 0, 3.5f, 10.5f, 0.5f, 5),
	};
	const bp_pair want[] = {{0, 1}, {0, 2}, {3, 4}};
	expect_pairs(boxes, 5, 3, period, want, 3);
}

Test(periodic, extent_exactly_half_the_period, .timeout = 60)
{
	const float period[3] = {10, 10, 10};
	// 0 = [0, 5] and 1 = [5, 10] on x (y both [0, 1]): they touch at 5 and again
	// at 10 = 0. One pair, reported once. 2 = [2.5, 7.5] x [5, 10]: y [5, 10]
	// vs [0, 1] touches at 10 = 0; x overlaps both. So all three pairs.
	oracle_box boxes[] = {
		box2(0, 0, 5, 1),
		box2(5, 0, 10, 1),
		box2(2.5f, 5, 7.5f, 10),
	};
	const bp_pair want[] = {{0, 1}, {0, 2}, {1, 2}};
	expect_pairs(boxes, 3, 2, period, want, 3);
}

Test(periodic, filters_and_static, .timeout = 60)
{
	const float period[3] = {10, 10, 10};
	// All four overlap across the seam in pairs; 0 and 1 are static (never paired
	// with each other), 3's mask excludes category 1 (so 3 pairs with nobody but 2,
	// whose category is 2).
	oracle_box boxes[] = {
		box2(9, 9, 10, 10),
		box2(0, 0, 0.5f, 0.5f),
		box2(-0.5f, -0.5f, 0.5f, 0.5f),
		box2(9.5f, 9.5f, 10.5f, 10.5f),
	};
	boxes[0].is_static = boxes[1].is_static = true;
	boxes[2].category = 2;
	boxes[3].mask = 2;
	const bp_pair want[] = {{0, 2}, {1, 2}, {2, 3}};
	expect_pairs(boxes, 4, 2, period, want, 3);
}

// ---- settings and errors -------------------------------------------------

Test(periodic, default_is_off)
{
	bp_world_def def = bp_world_def_default();
	cr_assert_not(def.periodic);
	cr_assert_eq(def.period[0], 0.0f);
	cr_assert_eq(def.period[1], 0.0f);
	cr_assert_eq(def.period[2], 0.0f);
	// Off: [9, 10] and [0, 1] do not touch in a plain world (the default def).
	oracle_box boxes[] = {box2(9, 0, 10, 1), box2(0, 0, 1, 1)};
	bp_world *w = test_world_from_boxes(boxes, 2, 2, BP_ALGO_BRUTE, 1);
	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t count = 1;
	bp_world_pairs(w, &count);
	cr_assert_eq(count, 0);
	bp_world_destroy(w);
}

Test(periodic, invalid_periods_are_rejected)
{
	const float bad[] = {0.0f, -0.0f, -1.0f, NAN, INFINITY, -INFINITY};
	for (int dims = 2; dims <= 3; ++dims)
		for (int axis = 0; axis < dims; ++axis)
			for (size_t b = 0; b < sizeof bad / sizeof *bad; ++b) {
				bp_world_def def = bp_world_def_default();
				def.dims = dims;
				def.periodic = true;
				def.period[0] = def.period[1] = def.period[2] = 10.0f;
				def.period[axis] = bad[b];
				bp_world *w = (bp_world *)&def; // must be cleared on error
				cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT, "dims=%d axis=%d period=%g", dims,
					axis, (double)bad[b]);
				cr_assert_null(w);
			}
	// z is ignored in 2D, and the period is ignored when periodic is off.
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.periodic = true;
	def.period[0] = def.period[1] = 4.0f;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_world_destroy(w);
	def.periodic = false;
	def.period[0] = NAN;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_world_destroy(w);
}

static bool mentions(const char *text, const char *word) { return strstr(text, word) != NULL; }

Test(periodic, too_large_extent_keeps_previous_pairs, .timeout = 60)
{
	const float period[3] = {10, 8, 6};
	for (int dims = 2; dims <= 3; ++dims)
		for (int axis = 0; axis < dims; ++axis) {
			// 0 and 1 touch across the x seam; 2 is apart.
			oracle_box boxes[] = {
				box3(9, 1, 1, 10, 2, 2),
				box3(0, 1, 1, 1, 2, 2),
				box3(4, 4, 4, 4.5f, 4.5f, 4.5f),
			};
			bp_world *w = periodic_world(boxes, 3, dims, period, BP_ALGO_BRUTE, 2);
			cr_assert_eq(bp_world_step(w), BP_OK);
			size_t before_count = 0;
			const bp_pair *before = bp_world_pairs(w, &before_count);
			cr_assert_eq(before_count, 1);
			bp_pair saved = before[0];
			cr_assert(saved.lo == 0 && saved.hi == 1);
			bp_frame_stats saved_stats = bp_world_stats(w);

			// Entity 2 grows to period / 2 + 1/8 on `axis`.
			float min[3] = {4, 4, 4}, max[3] = {4.5f, 4.5f, 4.5f};
			max[axis] = min[axis] + period[axis] / 2 + 0.125f;
			cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, 2), min, max), BP_OK);
			cr_assert_eq(bp_world_step(w), BP_ERR_PERIODIC_EXTENT, "dims=%d axis=%d", dims, axis);
			const char *error = bp_world_last_error(w);
			char axis_word[16];
			snprintf(axis_word, sizeof axis_word, "extent_%c", "xyz"[axis]);
			cr_assert(mentions(error, "dense index 2") && mentions(error, axis_word), "message: %s", error);
			size_t after_count = 0;
			const bp_pair *after = bp_world_pairs(w, &after_count);
			cr_assert_eq(after_count, 1);
			cr_assert(after[0].lo == saved.lo && after[0].hi == saved.hi);
			cr_assert_eq(bp_world_stats(w).frame, saved_stats.frame);

			// Exactly period / 2 is allowed again.
			max[axis] = min[axis] + period[axis] / 2;
			cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, 2), min, max), BP_OK);
			cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
			bp_world_destroy(w);
		}
}

/// With several offenders in different chunks, the lowest dense index is
/// named, whatever the thread count.
Test(periodic, first_offender_is_named_for_any_thread_count, .timeout = 120)
{
	const float period[3] = {64, 64, 64};
	uint32_t n = 20000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	periodic_boxes(boxes, n, 2, period, 0.0625f, 5);
	boxes[13000].max[1] = boxes[13000].min[1] + 40;
	boxes[5000].max[0] = boxes[5000].min[0] + 33;
	boxes[17000].max[0] = boxes[17000].min[0] + 50;
	for (size_t t = 0; t < sizeof thread_counts / sizeof *thread_counts; ++t) {
		bp_world_def def = bp_world_def_default();
		def.dims = 2;
		def.algorithm = BP_ALGO_BRUTE;
		def.thread_count = thread_counts[t];
		def.periodic = true;
		memcpy(def.period, period, sizeof period);
		bp_world *w = NULL;
		cr_assert_eq(bp_world_create(&def, &w), BP_OK);
		bp_bounds_arrays arrays;
		float *columns = malloc((size_t)n * 4 * sizeof(float));
		for (uint32_t i = 0; i < n; ++i) {
			columns[i] = boxes[i].min[0], columns[n + i] = boxes[i].min[1];
			columns[2 * n + i] = boxes[i].max[0], columns[3 * n + i] = boxes[i].max[1];
		}
		arrays = (bp_bounds_arrays){columns, columns + n, NULL, columns + 2 * n, columns + 3 * n, NULL};
		bp_entity_def common = bp_entity_def_default();
		cr_assert_eq(bp_world_create_entities(w, n, &arrays, &common, NULL), BP_OK);
		free(columns);
		cr_assert_eq(bp_world_step(w), BP_ERR_PERIODIC_EXTENT);
		const char *error = bp_world_last_error(w);
		cr_assert(mentions(error, "dense index 5000:") && mentions(error, "extent_x"), "threads=%d: %s", thread_counts[t],
			error);
		size_t count = 1;
		bp_world_pairs(w, &count);
		cr_assert_eq(count, 0, "no step has succeeded, so there are no pairs");
		bp_world_destroy(w);
	}
	free(boxes);
}

/// Many steps of a moving scene on one world: scratch reuse with growing and
/// shrinking entity and ghost counts stays correct.
Test(periodic, moving_scene_reuses_scratch, .timeout = 300)
{
	const float period[3] = {32, 48, 40};
	for (int dims = 2; dims <= 3; ++dims) {
		bp_world *w = NULL;
		uint32_t n = 300;
		oracle_box *boxes = calloc(n, sizeof *boxes);
		periodic_boxes(boxes, n, dims, period, 0.125f, 900);
		w = periodic_world(boxes, n, dims, period, BP_ALGO_AUTO, 3);
		for (int frame = 0; frame < 12; ++frame) {
			periodic_boxes(boxes, n, dims, period, frame % 3 == 0 ? 0.5f : 0.125f, 900 + (uint64_t)frame);
			for (uint32_t i = 0; i < n; ++i)
				cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, i), boxes[i].min, boxes[i].max), BP_OK);
			// Filters of the world stay as created (frame 0's); keep the oracle's in step.
			oracle_box *oracle_view = calloc(n, sizeof *oracle_view);
			for (uint32_t i = 0; i < n; ++i) {
				bp_entity_def d;
				cr_assert_eq(bp_entity_get(w, bp_world_entity_at(w, i), &d), BP_OK);
				oracle_view[i] = boxes[i];
				oracle_view[i].category = d.category;
				oracle_view[i].mask = d.mask;
				oracle_view[i].is_static = d.kind == BP_KIND_STATIC;
			}
			oracle_pairs want = oracle_find_periodic_pairs(oracle_view, n, dims, period);
			char what[48];
			snprintf(what, sizeof what, "dims=%d frame=%d", dims, frame);
			free(step_and_check(w, &want, what));
			oracle_pairs_free(&want);
			free(oracle_view);
		}
		bp_world_destroy(w);
		free(boxes);
	}
}

Test(periodic, scheduler_frames_use_the_periodic_image, .timeout = 120)
{
	const float period[3] = {24.0f, 16.0f, 20.0f};
	for (int dims = 2; dims <= 3; ++dims) {
		oracle_box boxes[300];
		periodic_boxes(boxes, 300, dims, period, 0.3f, 900 + (uint64_t)dims);
		oracle_pairs want = oracle_find_periodic_pairs(boxes, 300, dims, period);
		bp_world *w = periodic_world(boxes, 300, dims, period, BP_ALGO_AUTO, 2);
		bp_view *view = NULL;
		cr_assert_eq(bp_frame_step(w, &view), BP_OK, "%s", bp_world_last_error(w));
		size_t count;
		const bp_pair *pairs = bp_view_pairs(view, &count);
		cr_assert(oracle_same_pair_set(pairs, count, &want), "dims=%d: frame pairs differ from the oracle", dims);
		bp_view_release(view);
		bp_world_destroy(w);
		oracle_pairs_free(&want);
	}
	cr_assert_eq(bp_allocated_bytes(), 0);
}
