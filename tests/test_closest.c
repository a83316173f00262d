// SPDX-License-Identifier: MIT
// closest against the brute-force oracle: distributions, filters, threads, byte-identical
// output, and the kept order across steps (insertion-sort and full-sort paths).
#include <criterion/criterion.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "cells_fixture.h"
#include "algorithms/closest.h"
#include "algorithms/pipeline.h"

#define ALGO BP_ALGO_CLOSEST

// Steps a fresh world, checks it against the oracle and returns its pairs (malloc'ed).
static bp_pair *check_world(const oracle_box *boxes, uint32_t n, int dims, int threads, size_t *count)
{
	bp_world *world = cells_world(boxes, n, dims, ALGO, threads, 0);
	cr_assert_not_null(world);
	cr_assert_eq(bp_world_step(world), BP_OK, "%s", bp_world_last_error(world));
	size_t got_count;
	const bp_pair *got = bp_world_pairs(world, &got_count);
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	bp_frame_stats stats = bp_world_stats(world);
	cr_assert(oracle_same_pair_set(got, got_count, &want), "n=%u dims=%d threads=%d: %zu pairs, want %zu", n,
		dims, threads, got_count, want.count);
	cr_assert_eq(stats.algorithm, ALGO);
	cr_assert_eq(stats.pair_count, want.count);
	cr_assert_geq(stats.candidate_tests, want.count);
	cr_assert_eq(stats.cell_count, 0);
	cr_assert_eq(stats.cell_size, 0);
	oracle_pairs_free(&want);
	bp_pair *copy = malloc((got_count ? got_count : 1) * sizeof *copy);
	cr_assert_not_null(copy);
	if (got_count)
		memcpy(copy, got, got_count * sizeof *copy);
	*count = got_count;
	bp_world_destroy(world);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
	return copy;
}

Test(closest, sizes_0_to_100, .timeout = 120)
{
	oracle_box boxes[100];
	for (int dims = 2; dims <= 3; ++dims)
		for (uint32_t n = 0; n <= 100; ++n) {
			uint64_t seed = n * 3 + (uint64_t)dims;
			cells_make_scene(boxes, n, dims, (cells_dist)(seed % CELLS_DIST_COUNT), seed % 2 == 0, seed);
			size_t count;
			free(check_world(boxes, n, dims, 1 + (int)(n % 3), &count));
		}
}

// Every distribution (clusters, mixed sizes, touching lattice, points, far apart,
// one giant box) in 2D and 3D, with and without filters, on 1, 2, 3 and 8 threads.
Test(closest, distributions_match_oracle, .timeout = 240)
{
	const int threads[] = {1, 2, 3, 8};
	const uint32_t n = 2500;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (int d = 0; d < CELLS_DIST_COUNT; ++d)
		for (uint64_t seed = 1; seed <= 4; ++seed) {
			int dims = 2 + (int)(seed % 2);
			uint32_t m = d == CELLS_POINT ? 600 : n;
			cells_make_scene(boxes, m, dims, (cells_dist)d, seed > 2, seed * 31 + (uint64_t)d);
			size_t count;
			free(check_world(boxes, m, dims, threads[(seed + (uint64_t)d) % 4], &count));
		}
	free(boxes);
}

Test(closest, extreme_values_match_oracle, .timeout = 60)
{
	const uint32_t n = 3000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		cells_make_scene(boxes, n, dims, CELLS_FAR_BOTH, true, 3);
		for (int k = 0; k < dims; ++k) {
			boxes[1].min[k] = boxes[1].max[k] = -FLT_MAX;
			boxes[2].min[k] = boxes[2].max[k] = FLT_MAX;
			boxes[3].min[k] = -FLT_MAX;
			boxes[3].max[k] = FLT_MAX;
			boxes[4].min[k] = -0.0f;
			boxes[4].max[k] = 0.0f;
			boxes[5].min[k] = 0.0f;
			boxes[5].max[k] = 0.0f;
		}
		size_t count;
		free(check_world(boxes, n, dims, 2, &count));
	}
	free(boxes);
}

Test(closest, same_pairs_same_order_for_any_thread_count, .timeout = 240)
{
	const cells_dist dists[] = {CELLS_UNIFORM, CELLS_CLUSTERS, CELLS_MIXED, CELLS_HUGE, CELLS_LINE};
	const uint32_t n = 20000; // several chunks per merge level
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (int d = 0; d < 5; ++d) {
		int dims = 2 + d % 2;
		cells_make_scene(boxes, n, dims, dists[d], d % 2 == 0, 40 + (uint64_t)d);
		size_t want_count;
		bp_pair *want = check_world(boxes, n, dims, 1, &want_count);
		cells_expect_same_order(boxes, n, dims, ALGO, want, want_count);
		free(want);
	}
	free(boxes);
}

// ---- the kept order, driven through the algorithm table ---------------------

typedef struct direct_scene {
	float *min[3], *max[3];
	uint64_t *category, *mask;
	uint8_t *flags;
	bpi_scene scene;
} direct_scene;

static void direct_load(direct_scene *d, const oracle_box *boxes, uint32_t n, int dims, int threads)
{
	bool unfiltered = true;
	for (uint32_t i = 0; i < n; ++i) {
		for (int k = 0; k < dims; ++k) {
			d->min[k][i] = boxes[i].min[k];
			d->max[k][i] = boxes[i].max[k];
		}
		d->category[i] = boxes[i].category;
		d->mask[i] = boxes[i].mask;
		d->flags[i] = boxes[i].is_static ? BP_FLAG_STATIC : 0;
		unfiltered = unfiltered && !boxes[i].is_static && boxes[i].category == 1 && boxes[i].mask == UINT64_MAX;
	}
	d->scene = (bpi_scene){.count = n, .dims = dims, .category = d->category, .mask = d->mask, .flags = d->flags,
		.unfiltered = unfiltered, .threads = threads};
	for (int k = 0; k < dims; ++k) {
		d->scene.min[k] = d->min[k];
		d->scene.max[k] = d->max[k];
	}
}

// One step of `index` over the boxes, checked against the oracle and against a
// fresh index (the order must not depend on the previous steps).
static void direct_step(bpi_indexes *indexes, direct_scene *d, const oracle_box *boxes, uint32_t n, int dims)
{
	bpi_pair_buffer out = {0}, fresh_out = {0};
	bp_frame_stats stats = {0}, fresh_stats = {0};
	cr_assert_eq(bpi_pipeline_run(indexes, BP_ALGO_CLOSEST, &d->scene, &out, &stats), BP_OK);
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	cr_assert(oracle_same_pair_set(out.data, out.count, &want), "%zu pairs, want %zu", out.count, want.count);
	oracle_pairs_free(&want);
	bpi_indexes fresh = {0};
	cr_assert_eq(bpi_pipeline_run(&fresh, BP_ALGO_CLOSEST, &d->scene, &fresh_out, &fresh_stats), BP_OK);
	cr_assert_eq(fresh_out.count, out.count);
	cr_assert(memcmp(fresh_out.data, out.data, out.count * sizeof(bp_pair)) == 0, "order depends on history");
	cr_assert_eq(fresh_stats.candidate_tests, stats.candidate_tests);
	bpi_indexes_free(&fresh);
	bpi_pair_buffer_free(&out);
	bpi_pair_buffer_free(&fresh_out);
}

static void kept_order_case(int dims, int threads, bool filters)
{
	const uint32_t n = 4000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	direct_scene d = {0};
	for (int k = 0; k < 3; ++k) {
		d.min[k] = calloc(n, sizeof(float));
		d.max[k] = calloc(n, sizeof(float));
		cr_assert(d.min[k] && d.max[k]);
	}
	d.category = calloc(n, sizeof(uint64_t));
	d.mask = calloc(n, sizeof(uint64_t));
	d.flags = calloc(n, 1);
	cr_assert(boxes && d.category && d.mask && d.flags);
	cells_make_scene(boxes, n, dims, CELLS_MIXED, filters, 17 + (uint64_t)dims);
	bpi_indexes indexes = {0};
	test_rng rng = {5};
	for (int step = 0; step < 12; ++step) {
		// Steps 4 and 9 scatter every box across the scene: far more than
		// 4N insertion moves, so the full sort must take over. The others move
		// each box by at most 0.005: ~180 boxes start per unit of the sort axis
		// (4000 over ~22), so a box passes ~180 * 2/3 * 0.005 = 0.6 others on
		// average, well under the 4 moves per entity that the insertion sort may take.
		bool scatter = step == 4 || step == 9;
		if (step > 0)
			for (uint32_t i = 0; i < n; ++i)
				for (int k = 0; k < dims; ++k) {
					float delta = scatter ? test_rng_float(&rng, -40, 40) : test_rng_float(&rng, -0.005f, 0.005f);
					boxes[i].min[k] += delta;
					boxes[i].max[k] += delta;
				}
		direct_load(&d, boxes, n, dims, threads);
		uint64_t before = step ? bpi_closest_full_sorts(indexes.of[BP_ALGO_CLOSEST]) : 0;
		direct_step(&indexes, &d, boxes, n, dims);
		uint64_t full = bpi_closest_full_sorts(indexes.of[BP_ALGO_CLOSEST]) - before;
		if (step == 0 || scatter)
			cr_assert_eq(full, 1, "step %d: expected the full sort", step);
		else
			cr_assert_eq(full, 0, "step %d: expected the insertion sort", step);
	}
	// One entity fewer: a changed count cannot reuse the order.
	direct_load(&d, boxes, n - 1, dims, threads);
	uint64_t before = bpi_closest_full_sorts(indexes.of[BP_ALGO_CLOSEST]);
	direct_step(&indexes, &d, boxes, n - 1, dims);
	cr_assert_eq(bpi_closest_full_sorts(indexes.of[BP_ALGO_CLOSEST]) - before, 1);
	bpi_indexes_free(&indexes);
	for (int k = 0; k < 3; ++k) {
		free(d.min[k]);
		free(d.max[k]);
	}
	free(d.category);
	free(d.mask);
	free(d.flags);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(closest, kept_order_small_and_large_moves, .timeout = 120)
{
	kept_order_case(3, 1, false);
	kept_order_case(2, 3, true);
	kept_order_case(3, 8, true);
}

