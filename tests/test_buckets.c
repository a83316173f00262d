// SPDX-License-Identifier: MIT
// buckets against the brute-force oracle: the shared cell suite, boxes on bucket
// boundaries, huge spans, and byte-identical output for any thread count.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <float.h>
#include <stdlib.h>

#include "cells_fixture.h"

#define ALGO BP_ALGO_BUCKETS
#define SUITE buckets
#include "cells_suite.inc"

// Boxes whose faces sit on bucket faces: the edge the step reports, e, is fed back
// as the cell size, and every min/max is a multiple of e (or of e/2), counted from
// the scene minimum (the grid origin). Zero-size boxes and touching boxes included.
static void boundary_case(int dims, int threads, uint64_t seed)
{
	const uint32_t n = 2000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	cells_make_scene(boxes, n, dims, CELLS_UNIFORM, seed % 2 == 0, seed);
	bp_world *world = cells_world(boxes, n, dims, ALGO, threads, 0);
	size_t count;
	free(cells_check_step(world, boxes, n, dims, &count));
	float e = bp_world_stats(world).cell_size;
	bp_world_destroy(world);
	cr_assert_gt(e, 0);
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		for (int k = 0; k < dims; ++k) {
			float lo = (float)test_rng_below(&rng, 40) * e * 0.5f;
			uint32_t span = test_rng_below(&rng, 4); // 0: a point or flat box on a face
			boxes[i].min[k] = lo;
			boxes[i].max[k] = lo + (float)span * e * 0.5f;
		}
	}
	boxes[0].min[0] = boxes[0].max[0] = 0; // the origin is a bucket corner
	free(cells_check(boxes, n, dims, ALGO, threads, e, &count));
	free(boxes);
}

Test(buckets, boxes_on_bucket_boundaries, .timeout = 120)
{
	const int threads[] = {1, 2, 3, 8};
	for (uint64_t seed = 1; seed <= 8; ++seed) {
		boundary_case(3, threads[seed % 4], seed);
		boundary_case(2, threads[(seed + 1) % 4], seed);
	}
}

// Spans no grid could cover at the entities' scale: +-FLT_MAX corners, 1e7 apart
// clusters, one giant box. The edge grows to the bucket cap, coordinates clamp,
// and the pairs stay exact (never BP_ERR_UNSUPPORTED).
Test(buckets, huge_spans_are_exact, .timeout = 120)
{
	const uint32_t n = 3000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint64_t seed = 1; seed <= 4; ++seed) {
			cells_make_scene(boxes, n, dims, seed % 2 ? CELLS_FAR_BOTH : CELLS_MIXED, seed > 2, seed);
			for (int k = 0; k < dims; ++k) {
				boxes[1].min[k] = -FLT_MAX;
				boxes[1].max[k] = -FLT_MAX;
				boxes[2].min[k] = FLT_MAX;
				boxes[2].max[k] = FLT_MAX;
				boxes[3].min[k] = -FLT_MAX;
				boxes[3].max[k] = FLT_MAX;
				boxes[4].min[k] = -FLT_MAX;
				boxes[4].max[k] = 0;
				boxes[5].min[k] = 1e7f;
				boxes[5].max[k] = 1e7f + 1;
			}
			size_t count;
			free(cells_check(boxes, n, dims, ALGO, (int)seed, 0, &count));
			free(cells_check(boxes, n, dims, ALGO, 2, 1e-3f, &count));
		}
	}
	free(boxes);
}

Test(buckets, many_seeds_threads_identical, .timeout = 240)
{
	const cells_dist dists[] = {CELLS_UNIFORM, CELLS_CLUSTERS, CELLS_MIXED, CELLS_HUGE};
	for (int d = 0; d < 4; ++d) {
		cells_test_threads_identical(ALGO, dists[d], 3, 3000);
		cells_test_threads_identical(ALGO, dists[d], 2, 3000);
	}
}

Test(buckets, random_seeds_match_oracle, .timeout = 240)
{
	for (uint64_t seed = 1; seed <= 24; ++seed) {
		cells_case c = {(cells_dist)(seed % CELLS_DIST_COUNT), 1500, 2 + (int)(seed % 2), seed % 3 == 0,
			1 + (int)(seed % 4), seed % 5 == 0 ? 0.3f : 0, seed};
		if (c.threads == 4)
			c.threads = 8;
		cells_test_scene(ALGO, &c);
	}
}
