// SPDX-License-Identifier: MIT
// Numeric edges for every algorithm, against the oracle: signed zeros, denormals,
// coordinates near +-FLT_MAX and +-1e7, one box spanning everything, 0 and 1 entities.
#include <criterion/criterion.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "oracle.h"

/// Steps every available algorithm on the boxes at 1 and 2 threads and checks each
/// against the oracle. grid and hash may refuse bounds whose spans overflow float
/// (BP_ERR_UNSUPPORTED, documented); every other outcome must be the exact pair set.
static void check_all(const oracle_box *boxes, uint32_t n, int dims, const char *what)
{
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	for (int a = BP_ALGO_AUTO; a < BP_ALGO_COUNT; ++a) {
		if (!bp_algorithm_available((bp_algorithm)a))
			continue;
		for (int threads = 1; threads <= 2; ++threads) {
			bp_world *w = test_world_from_boxes(boxes, n, dims, (bp_algorithm)a, threads);
			bp_status status = bp_world_step(w);
			bool cells = a == BP_ALGO_GRID || a == BP_ALGO_HASH;
			if (status == BP_ERR_UNSUPPORTED && cells) {
				bp_world_destroy(w);
				continue;
			}
			cr_assert_eq(status, BP_OK, "%s %s: %s", what, bp_algorithm_name((bp_algorithm)a), bp_world_last_error(w));
			size_t count;
			const bp_pair *pairs = bp_world_pairs(w, &count);
			cr_assert(oracle_same_pair_set(pairs, count, &want), "%s: %s with %d threads", what,
				bp_algorithm_name((bp_algorithm)a), threads);
			bp_world_destroy(w);
		}
	}
	oracle_pairs_free(&want);
}

static oracle_box box(float x0, float y0, float z0, float x1, float y1, float z1)
{
	return (oracle_box){{x0, y0, z0}, {x1, y1, z1}, 1, UINT64_MAX, false, false};
}

Test(numeric, negative_zero_touches_positive_zero, .timeout = 60)
{
	// -0.0 == +0.0, so [-1, -0] and [+0, 1] touch on x and must pair (closed intervals).
	oracle_box boxes[] = {
		box(-1.0f, 0, 0, -0.0f, 1, 1),
		box(+0.0f, 0, 0, 1.0f, 1, 1),
		box(-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f), // a point at -0 touches both
		box(0.0f, 2.0f, 0, 0.0f, 3.0f, 0),             // above them: no pair
	};
	check_all(boxes, 4, 3, "signed zeros");
	check_all(boxes, 4, 2, "signed zeros 2D");
}

Test(numeric, denormal_extents_and_positions, .timeout = 60)
{
	const float d = FLT_TRUE_MIN; // smallest denormal
	oracle_box boxes[] = {
		box(0, 0, 0, d, d, d),
		box(d, d, d, 2 * d, 2 * d, 2 * d), // touches the first at (d, d, d)
		box(3 * d, 0, 0, 4 * d, d, d),     // a denormal gap away from the second on x
		box(-d, -d, -d, 0, 0, 0),          // touches the first at the origin
	};
	check_all(boxes, 4, 3, "denormals");
}

Test(numeric, near_flt_max_and_1e7, .timeout = 120)
{
	oracle_box boxes[64];
	test_rng rng = {5};
	for (int i = 0; i < 64; ++i) {
		float base = i % 2 ? 1e7f : -1e7f;
		if (i % 8 == 0)
			base = i % 16 ? FLT_MAX / 2 : -FLT_MAX;
		float x = base + test_rng_float(&rng, 0, 4) * (i % 8 == 0 ? 1e30f : 1.0f);
		boxes[i] = box(x, 0, 0, i % 8 == 0 ? FLT_MAX / 2 + (float)(i % 16 ? 1e37 : 0) : x + 2, 1, 1);
	}
	check_all(boxes, 64, 3, "near FLT_MAX and 1e7");
}

// Finding (issue 15): grid and hash refused such bounds with "grid step: not supported"
// although world.h promises that last_error says why. It names the axis, its span and
// the limit. The scene: a box over x in [-3e38, 3e38] (span 6e38 > FLT_MAX) among
// small ones, and in 3D one over z as well (x is named, the first such axis).
Test(numeric, unsupported_spans_are_named, .timeout = 60)
{
	for (int dims = 2; dims <= 3; ++dims) {
		oracle_box boxes[3] = {box(-3e38f, 0, 0, 3e38f, 1, 1), box(0, 0, 0, 1, 1, 1), box(5, 5, 5, 6, 6, 6)};
		if (dims == 3)
			boxes[1] = box(0, 0, -3e38f, 1, 1, 3e38f);
		const bp_algorithm cells[] = {BP_ALGO_GRID, BP_ALGO_HASH};
		for (int c = 0; c < 2; ++c) {
			if (!bp_algorithm_available(cells[c]))
				continue;
			bp_world *w = test_world_from_boxes(boxes, 3, dims, cells[c], 1);
			cr_assert_eq(bp_world_step(w), BP_ERR_UNSUPPORTED, "%s", bp_world_last_error(w));
			char want[192];
			snprintf(want, sizeof want,
				"%s step: not supported: x spans %.9g to %.9g, beyond float range (%s needs max - min <= %.9g on "
				"each axis; sap takes any finite bounds)",
				bp_algorithm_name(cells[c]), (double)-3e38f, (double)3e38f, bp_algorithm_name(cells[c]),
				(double)FLT_MAX);
			cr_assert_str_eq(bp_world_last_error(w), want);
			bp_world_destroy(w);
		}
	}
}

Test(numeric, one_box_spanning_everything_and_tiny_scenes, .timeout = 120)
{
	oracle_box boxes[201];
	test_random_boxes(boxes, 200, 3, 100.0f, 2.0f, false, 9);
	boxes[200] = box(-FLT_MAX, -FLT_MAX, -FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX);
	check_all(boxes, 201, 3, "one box over everything");
	check_all(boxes, 0, 3, "no entities");
	check_all(boxes, 1, 3, "one entity");
}
