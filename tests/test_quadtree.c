// SPDX-License-Identifier: MIT
// quadtree against the brute-force oracle: fresh scenes, and worlds whose tree is kept and
// updated incrementally across steps (moves, creations, destructions, splits and merges).
#include <criterion/criterion.h>

#include <float.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cells_fixture.h"
#include "algorithms/quadtree.h"
#include "world/world_data.h"

#define ALGO BP_ALGO_QUADTREE

static const int thread_counts[] = {1, 2, 3, 8};

Test(quadtree, sizes_0_to_64, .timeout = 120)
{
	cells_test_small_sizes(ALGO);
}

Test(quadtree, every_distribution_2d_3d_threads, .timeout = 240)
{
	// Filters (categories, masks, static kinds) on every other case.
	uint64_t seed = 1;
	for (int d = 0; d < CELLS_DIST_COUNT; ++d)
		for (int dims = 2; dims <= 3; ++dims)
			for (int t = 0; t < 4; ++t, ++seed) {
				uint32_t n = d == CELLS_POINT ? 400 : 3000;
				cells_case c = {(cells_dist)d, n, dims, seed % 2 == 0, thread_counts[t], 0, seed};
				cells_test_scene(ALGO, &c);
			}
}

Test(quadtree, same_pairs_same_order_for_any_thread_count, .timeout = 120)
{
	cells_test_threads_identical(ALGO, CELLS_MIXED, 3, 5000);
	cells_test_threads_identical(ALGO, CELLS_CLUSTERS, 2, 5000);
	cells_test_threads_identical(ALGO, CELLS_HUGE, 3, 5000);
}

Test(quadtree, moving_boxes_over_steps, .timeout = 120)
{
	cells_test_moving(ALGO, 3, 2);
	cells_test_moving(ALGO, 2, 3);
}

// ---- a world with a history: the incremental path ----

/// The boxes in dense order, mirrored by hand: destroy moves the last box into the hole.
typedef struct history {
	bp_world *world;
	oracle_box *boxes;
	uint32_t n, capacity;
	int dims;
	test_rng rng;
} history;

static void history_init(history *h, uint32_t n, int dims, int threads, bool filters, uint64_t seed)
{
	h->capacity = n * 3 + 64;
	h->boxes = malloc(h->capacity * sizeof *h->boxes);
	cr_assert_not_null(h->boxes);
	test_random_boxes(h->boxes, n, dims, 100, 2, filters, seed);
	h->n = n;
	h->dims = dims;
	h->rng = (test_rng){seed * 7919 + 1};
	h->world = test_world_from_boxes(h->boxes, n, dims, ALGO, threads);
	cr_assert_not_null(h->world);
}

static void history_free(history *h)
{
	bp_world_destroy(h->world);
	free(h->boxes);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
}

static void set_box(history *h, uint32_t i, float x, float y, float z, float e)
{
	float at[3] = {x, y, z};
	for (int axis = 0; axis < 3; ++axis) {
		h->boxes[i].min[axis] = at[axis];
		h->boxes[i].max[axis] = at[axis] + e;
	}
	cr_assert_eq(bp_entity_set_bounds(h->world, bp_world_entity_at(h->world, i), h->boxes[i].min, h->boxes[i].max),
		BP_OK);
}

/// Moves entity i by up to `by` on each axis (through the bulk setter).
static void nudge(history *h, uint32_t i, float by)
{
	for (int axis = 0; axis < h->dims; ++axis) {
		float d = test_rng_float(&h->rng, -by, by);
		h->boxes[i].min[axis] += d;
		h->boxes[i].max[axis] += d;
	}
	const oracle_box *b = &h->boxes[i];
	bp_bounds_arrays a = {&b->min[0], &b->min[1], &b->min[2], &b->max[0], &b->max[1], &b->max[2]};
	cr_assert_eq(bp_entities_set_bounds(h->world, bp_target_range(i, 1), &a), BP_OK);
}

static void create_one(history *h, float world)
{
	cr_assert_lt(h->n, h->capacity);
	oracle_box *b = &h->boxes[h->n];
	test_random_boxes(b, 1, h->dims, world, 2, false, test_rng_next(&h->rng));
	bp_entity_def def = bp_entity_def_default();
	memcpy(def.min, b->min, sizeof def.min);
	memcpy(def.max, b->max, sizeof def.max);
	bp_entity e;
	cr_assert_eq(bp_entity_create(h->world, &def, &e), BP_OK);
	h->n++;
}

static void destroy_one(history *h, uint32_t i)
{
	cr_assert_eq(bp_entity_destroy(h->world, bp_world_entity_at(h->world, i)), BP_OK);
	h->boxes[i] = h->boxes[--h->n];
}

/// Steps and checks against the oracle; returns an order-sensitive hash of the pair list.
static uint64_t history_check(history *h, uint32_t *reinserted)
{
	cr_assert_eq(bp_world_step(h->world), BP_OK, "%s", bp_world_last_error(h->world));
	size_t count;
	const bp_pair *got = bp_world_pairs(h->world, &count);
	oracle_pairs want = oracle_find_pairs(h->boxes, h->n, h->dims);
	cr_assert(oracle_same_pair_set(got, count, &want), "n=%u dims=%d: %zu pairs, want %zu", h->n, h->dims,
		count, want.count);
	oracle_pairs_free(&want);
	if (reinserted)
		*reinserted = bpi_quadtree_reinserted(h->world->stepper.indexes.of[ALGO]);
	uint64_t hash = 1469598103934665603ull;
	for (size_t i = 0; i < count; ++i)
		hash = (hash ^ ((uint64_t)got[i].lo << 32 | got[i].hi)) * 1099511628211ull;
	return hash;
}

#define HISTORY_STEPS 14

/// One fixed history; hashes[s] is the pair list of step s.
static void run_history(int dims, int threads, uint64_t seed, uint64_t hashes[HISTORY_STEPS])
{
	history h;
	history_init(&h, 2000, dims, threads, seed % 2 == 1, seed);
	uint32_t reinserted;
	hashes[0] = history_check(&h, &reinserted);
	cr_assert_eq(reinserted, 2000, "the first step builds the whole tree");
	for (int step = 1; step < HISTORY_STEPS; ++step) {
		// 5% move a little, so the tree must move them between nodes at times.
		uint32_t moved = h.n / 20;
		for (uint32_t m = 0; m < moved; ++m)
			nudge(&h, test_rng_below(&h.rng, h.n), 0.5f);
		bool big = step % 3 == 0, leave = step % 5 == 0, churn = step % 2 == 0;
		if (big) // a few jump anywhere in the scene
			for (int m = 0; m < 20; ++m)
				set_box(&h, test_rng_below(&h.rng, h.n), test_rng_float(&h.rng, 0, 100),
					test_rng_float(&h.rng, 0, 100), test_rng_float(&h.rng, 0, 100), 1);
		if (leave) // one leaves the padded root box (farther each time): the tree is rebuilt
			set_box(&h, test_rng_below(&h.rng, h.n), 200.0f * step, -150.0f * step, 100.0f * step, 3);
		if (churn) {
			for (int m = 0; m < 15; ++m)
				destroy_one(&h, test_rng_below(&h.rng, h.n));
			for (int m = 0; m < 10; ++m)
				create_one(&h, 100);
		}
		hashes[step] = history_check(&h, &reinserted);
		if (!leave) {
			// Incremental: at most the moved, jumped and created entities plus the ones that
			// destroys swapped into new dense indices (each destroy moves one).
			uint32_t bound = moved + (big ? 20 : 0) + (churn ? 25 : 0);
			cr_assert_leq(reinserted, bound, "step %d re-inserted %u entities, expected <= %u", step,
				reinserted, bound);
			cr_assert_gt(reinserted, 0);
		} else {
			cr_assert_eq(reinserted, h.n, "an entity outside the root forces a rebuild");
		}
	}
	history_free(&h);
}

Test(quadtree, incremental_history_matches_oracle_and_threads, .timeout = 240)
{
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint64_t seed = 1; seed <= 2; ++seed) {
			uint64_t first[HISTORY_STEPS], other[HISTORY_STEPS];
			run_history(dims, 1, seed, first);
			for (int t = 1; t < 4; ++t) {
				run_history(dims, thread_counts[t], seed, other);
				cr_assert(memcmp(first, other, sizeof first) == 0,
					"dims %d threads %d: a step's pair order differs from 1 thread", dims, thread_counts[t]);
			}
		}
	}
}

// ---- splits and merges ----

/// Moves a quarter of the entities per step from one layout to another, checking each step.
/// Quarters keep each step under the half-moved rebuild threshold, so splits and merges are
/// incremental. Returns the largest leaf count seen.
static uint64_t morph(history *h, void (*place)(history *, uint32_t), uint64_t *last_leaves)
{
	uint64_t most = 0;
	for (int quarter = 0; quarter < 4; ++quarter) {
		for (uint32_t i = quarter * h->n / 4; i < (quarter + 1) * h->n / 4; ++i)
			place(h, i);
		uint32_t reinserted;
		history_check(h, &reinserted);
		cr_assert_leq(reinserted, h->n / 4 + 1, "incremental, not a rebuild");
		*last_leaves = bp_world_stats(h->world).cell_count;
		most = BP_MAX(most, *last_leaves);
	}
	return most;
}

/// A large box across the middle of the scene: it straddles the root's split, stays at the root.
static void place_large(history *h, uint32_t i)
{
	set_box(h, i, test_rng_float(&h->rng, 0, 40), test_rng_float(&h->rng, 0, 40), test_rng_float(&h->rng, 0, 40),
		60);
}

/// A small box in a dense cluster near (30, 30, 30): deep splits.
static void place_cluster(history *h, uint32_t i)
{
	set_box(h, i, 30 + test_rng_float(&h->rng, 0, 0.5f), 30 + test_rng_float(&h->rng, 0, 0.5f),
		30 + test_rng_float(&h->rng, 0, 0.5f), 0.01f);
}

Test(quadtree, cluster_splits_then_merges, .timeout = 120)
{
	for (int dims = 2; dims <= 3; ++dims) {
		history h;
		history_init(&h, 2000, dims, 2, false, 41 + dims);
		for (uint32_t i = 0; i < h.n; ++i)
			place_large(&h, i);
		history_check(&h, NULL);
		uint64_t start = bp_world_stats(h.world).cell_count, now;
		// Every large box straddles the root's split: the root keeps them, its children are
		// empty leaves, so the tree is the root and one block of K leaves.
		cr_assert_eq(start, 1u << dims);
		uint64_t peak = morph(&h, place_cluster, &now);
		cr_assert_gt(peak, 20 * start, "clustering splits deep: %llu leaves, started with %llu",
			(unsigned long long)peak, (unsigned long long)start);
		uint64_t after = 0;
		morph(&h, place_large, &after);
		cr_assert_lt(after, peak / 10, "merges: %llu leaves after spreading, %llu at the peak",
			(unsigned long long)after, (unsigned long long)peak);
		history_free(&h);
	}
}

// ---- degenerate boxes and spans ----

Test(quadtree, identical_and_zero_size_boxes_stop_at_the_depth_cap, .timeout = 120)
{
	enum { N = 400 };
	oracle_box *boxes = calloc(N, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		for (int kind = 0; kind < 3; ++kind) {
			for (uint32_t i = 0; i < N; ++i) {
				// 0: identical unit boxes; 1: one point; 2: points on a 4-wide lattice, 25 per spot.
				float p = kind == 2 ? (float)(i % 16 / 4) : 7;
				float q = kind == 2 ? (float)(i % 4) : 7;
				float e = kind == 0 ? 1 : 0;
				boxes[i] = (oracle_box){.min = {p, q, p}, .max = {p + e, q + e, p + e}, .category = UINT64_MAX, .mask = UINT64_MAX};
			}
			for (int t = 0; t < 4; t += 2) {
				size_t count;
				free(cells_check(boxes, N, dims, ALGO, thread_counts[t], 0, &count));
			}
		}
	}
	free(boxes);
}

Test(quadtree, huge_spans_are_exact, .timeout = 60)
{
	enum { N = 600 };
	oracle_box *boxes = calloc(N, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		test_random_boxes(boxes, N, dims, 1e3f, 4, true, 5 + dims);
		// Boxes over all of float, at its ends, and points at +-1e38 and +-1e7.
		boxes[0] = (oracle_box){.min = {-FLT_MAX, -FLT_MAX, -FLT_MAX}, .max = {FLT_MAX, FLT_MAX, FLT_MAX},
			.category = UINT64_MAX, .mask = UINT64_MAX};
		boxes[1] = (oracle_box){.min = {FLT_MAX, FLT_MAX, FLT_MAX}, .max = {FLT_MAX, FLT_MAX, FLT_MAX},
			.category = UINT64_MAX, .mask = UINT64_MAX};
		boxes[2] = (oracle_box){.min = {-FLT_MAX, -FLT_MAX, -FLT_MAX}, .max = {-1e38f, -1e38f, -1e38f},
			.category = UINT64_MAX, .mask = UINT64_MAX};
		for (uint32_t i = 3; i < 40; ++i) {
			float at = i % 2 ? 1e38f : -1e7f;
			boxes[i] = (oracle_box){.min = {at, at, at}, .max = {at, at, at}, .category = UINT64_MAX, .mask = UINT64_MAX,
				.is_static = i % 3 == 0};
		}
		for (int t = 0; t < 4; ++t) {
			size_t count;
			free(cells_check(boxes, N, dims, ALGO, thread_counts[t], 0, &count));
		}
	}
	free(boxes);
}

// ---- allocation failure keeps the index usable ----

/// Allocations are counted only while armed (inside bp_world_step), so entity creation in
/// the test itself never fails.
static _Atomic uint64_t alloc_calls, alloc_fail_at;
static _Atomic bool alloc_armed;

static void *failing_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (alloc_armed && ++alloc_calls == alloc_fail_at)
		return NULL;
	size_t a = align < 16 ? 16 : align;
	return aligned_alloc(a, (size + a - 1) / a * a);
}

static void failing_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size;
	(void)align;
	(void)user;
	free(ptr);
}

Test(quadtree, failed_allocation_then_recovery, .timeout = 240)
{
	const bp_allocator hook = {failing_alloc, failing_free, NULL};
	bp_set_allocator(&hook);
	// A world of 200, then steps that move, grow and shrink it. Allocation k fails once,
	// somewhere in the steps: that step fails with OUT_OF_MEMORY, keeps its previous pairs,
	// and every later step matches the oracle (the tree rebuilt or still consistent).
	bool injected = true;
	for (uint64_t k = 1; injected; ++k) {
		history h;
		history_init(&h, 200, 3, 1, false, 77);
		alloc_calls = 0;
		alloc_fail_at = k;
		for (int step = 0; step < 5; ++step) {
			for (uint32_t m = 0; m < 30; ++m)
				nudge(&h, test_rng_below(&h.rng, h.n), 3);
			if (step == 2)
				for (int m = 0; m < 300; ++m) // the tree grows past its pool and arrays
					create_one(&h, 100);
			if (step == 3)
				for (int m = 0; m < 250; ++m)
					destroy_one(&h, test_rng_below(&h.rng, h.n));
			size_t before_count;
			const bp_pair *before = bp_world_pairs(h.world, &before_count);
			alloc_armed = true;
			bp_status status = bp_world_step(h.world);
			alloc_armed = false;
			if (status == BP_ERR_OUT_OF_MEMORY) {
				size_t count;
				cr_assert_eq(bp_world_pairs(h.world, &count), before);
				cr_assert_eq(count, before_count, "a failed step keeps the previous pairs");
				continue;
			}
			cr_assert_eq(status, BP_OK, "k=%llu step %d: %s", (unsigned long long)k, step,
				bp_world_last_error(h.world));
			size_t count;
			const bp_pair *got = bp_world_pairs(h.world, &count);
			oracle_pairs want = oracle_find_pairs(h.boxes, h.n, h.dims);
			cr_assert(oracle_same_pair_set(got, count, &want), "k=%llu step %d", (unsigned long long)k, step);
			oracle_pairs_free(&want);
		}
		injected = alloc_calls >= k;
		alloc_fail_at = 0;
		history_free(&h);
	}
	bp_set_allocator(NULL);
}
