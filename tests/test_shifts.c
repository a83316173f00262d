// SPDX-License-Identifier: MIT
// shifts against the brute-force oracle: the shared cell suite, a hand-worked 2D example
// of which shift reports a pair, sector boundaries, huge spans, filters and allocation failure.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cells_fixture.h"

#define ALGO BP_ALGO_SHIFTS
#define SUITE shifts
#include "cells_suite.inc"

/// b + e rounded down to a float, so that (double)result - b <= e exactly.
static float add_at_most(float b, float e)
{
	float r = b + e;
	while ((double)r - (double)b > (double)e)
		r = nextafterf(r, -FLT_MAX);
	return r;
}

static oracle_box box2(float x0, float y0, float x1, float y1)
{
	return (oracle_box){.min = {x0, y0, 0}, .max = {x1, y1, 0}, .category = 1, .mask = UINT64_MAX};
}

// Hand-worked 2D example, cell_size 4. Every extent is 1, so the exact minimum
// sector 2 x 1 x (1 + 2^-16) is below 4 and the sector is 4: half sectors
// H = 2, origin (0, 0) (the point box O is the smallest lower corner). Per axis
// q = floor(min / 2); shift 0 puts an entity in slab q >> 1, shift 1 in
// (q + 1) >> 1. Passes in order p = hx + 2 hy: 0 (none), 1 (x), 2 (y), 3 (both).
//   O [0,0]-[0,0]            q (0,0)   A [1,1]-[2,2]       q (0,0)
//   B [1.5,1.5]-[2.5,2.5]    q (0,0)   C [3.5,9]-[4.5,10]  q (1,4)
//   D [4,9.5]-[5,10.5]       q (2,4)   E [9,3.5]-[10,4.5]  q (4,1)
//   F [9.5,4]-[10.5,5]       q (4,2)   G [19.5,19.5]-[20.5,20.5] q (9,9)
//   H [20,20]-[21,21]        q (10,10)
// Overlapping pairs: AB, CD, EF, GH. Sectors (cx, cy) per pass:
//   pass 0: OAB (0,0) | C (0,2) D (1,2) | E (2,0) F (2,1) | G (4,4) H (5,5)  -> 7
//   pass 1: OAB (0,0) | CD (1,2)        | E (2,0) F (2,1) | G (5,4) H (5,5)  -> 6
//   pass 2: OAB (0,0) | C (0,2) D (1,2) | EF (2,1)        | G (4,5) H (5,5)  -> 6
//   pass 3: OAB (0,0) | CD (1,2)        | EF (2,1)        | GH (5,5)         -> 4
// 23 non-empty sectors. Candidate tests (same sector, x intervals overlap; the
// sweep stops for O, whose max x 0 is below A's min x 1): AB in every pass (4),
// CD in passes 1 and 3, EF in 2 and 3, GH in 3: 9. Reported: AB in pass 0; CD in
// pass 1 (pass 3 shifts y too, and shift 0 shares the y slab: 4>>1 == 4>>1);
// EF in pass 2 (pass 3: x slab shared under shift 0); GH in pass 3 (q 9 and 10
// differ in slab under shift 0 on both axes). Output is in pass order, so the
// list must read AB, CD, EF, GH, each from the pass worked out above.
Test(shifts, hand_worked_2d_which_shift_reports, .timeout = 30)
{
	const oracle_box boxes[] = {
		box2(0, 0, 0, 0),
		box2(1, 1, 2, 2),
		box2(1.5f, 1.5f, 2.5f, 2.5f),
		box2(3.5f, 9, 4.5f, 10),
		box2(4, 9.5f, 5, 10.5f),
		box2(9, 3.5f, 10, 4.5f),
		box2(9.5f, 4, 10.5f, 5),
		box2(19.5f, 19.5f, 20.5f, 20.5f),
		box2(20, 20, 21, 21),
	};
	for (int threads = 1; threads <= 3; ++threads) {
		bp_world *world = cells_world(boxes, 9, 2, ALGO, threads, 4.0f);
		size_t count;
		bp_pair *pairs = cells_check_step(world, boxes, 9, 2, &count);
		const bp_pair want[] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
		cr_assert_eq(count, 4);
		cr_assert(memcmp(pairs, want, sizeof want) == 0, "pairs not in the worked pass order");
		bp_frame_stats stats = bp_world_stats(world);
		cr_assert_eq(stats.cell_size, 4.0f);
		cr_assert_eq(stats.candidate_tests, 9);
		cr_assert_eq(stats.cell_count, 23);
		free(pairs);
		bp_world_destroy(world);
	}
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// Steps the boxes with threads 1, 2, 3 and 8: each against the oracle, all
/// byte-identical to the first.
static void check_all_threads(const oracle_box *boxes, uint32_t n, int dims, float cell_size)
{
	static const int threads[] = {1, 2, 3, 8};
	size_t want_count = 0;
	bp_pair *want = NULL;
	for (int t = 0; t < 4; ++t) {
		bp_world *world = cells_world(boxes, n, dims, ALGO, threads[t], cell_size);
		size_t count;
		bp_pair *got = cells_check_step(world, boxes, n, dims, &count);
		bp_world_destroy(world);
		if (!want) {
			want = got;
			want_count = count;
			continue;
		}
		cr_assert_eq(count, want_count);
		cr_assert(memcmp(got, want, count * sizeof *got) == 0, "threads=%d: pair order differs", threads[t]);
		free(got);
	}
	free(want);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(shifts, random_scenes_all_thread_counts, .timeout = 240)
{
	const cells_dist dists[] = {CELLS_UNIFORM, CELLS_CLUSTERS, CELLS_MIXED, CELLS_HUGE, CELLS_FAR_BOTH};
	oracle_box *boxes = calloc(3000, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (uint64_t seed = 1; seed <= 12; ++seed)
		for (int dims = 2; dims <= 3; ++dims) {
			cells_dist dist = dists[seed % 5];
			uint32_t n = 300 + (uint32_t)(seed * 211 % 2700);
			cells_make_scene(boxes, n, dims, dist, seed % 3 == 0, seed);
			check_all_threads(boxes, n, dims, 0);
		}
	// Plain uniform random boxes with filters and static kinds, extents up to 4x
	// the mean spacing, so sectors hold many entities.
	for (uint64_t seed = 1; seed <= 6; ++seed)
		for (int dims = 2; dims <= 3; ++dims) {
			test_random_boxes(boxes, 2000, dims, 40.0f, (float)seed, true, seed * 31);
			check_all_threads(boxes, 2000, dims, seed % 2 ? 0 : 3.0f * (float)seed);
		}
	free(boxes);
}

// Lower corners exactly on sector and half-sector boundaries of the sector the
// algorithm chose, boxes touching face to face, and points (zero extent) on
// boundaries. The first step reports the sector S; the second scene keeps the
// same origin (a point at 0) and largest extent (1), so it gets the same S.
Test(shifts, boxes_on_sector_boundaries, .timeout = 120)
{
	for (int dims = 2; dims <= 3; ++dims) {
		enum { N = 1200 };
		static oracle_box boxes[N];
		test_random_boxes(boxes, 200, dims, 10.0f, 1.0f, false, 7);
		boxes[0] = (oracle_box){.category = 1, .mask = UINT64_MAX}; // point at the origin
		boxes[1] = boxes[0];
		for (int k = 0; k < dims; ++k)
			boxes[1].max[k] = 1.0f; // extent exactly 1
		bp_world *world = cells_world(boxes, 200, dims, ALGO, 2, 0);
		cr_assert_eq(bp_world_step(world), BP_OK);
		float sector = bp_world_stats(world).cell_size;
		bp_world_destroy(world);
		cr_assert_geq(sector, 2.0f, "sector %g below twice the largest extent", (double)sector);

		test_rng rng = {dims};
		float half = sector * 0.5f;
		for (uint32_t i = 2; i < N; ++i) {
			oracle_box *b = &boxes[i];
			*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
			for (int k = 0; k < dims; ++k) {
				// A whole number of half sectors, or one ulp either side of it.
				float at = (float)test_rng_below(&rng, 12) * half;
				uint32_t nudge = test_rng_below(&rng, 4);
				if (nudge == 1)
					at = nextafterf(at, -1.0f);
				else if (nudge == 2)
					at = nextafterf(at, 1e9f);
				b->min[k] = fmaxf(at, 0.0f);
				// Extent 0 (point), exactly 1, or reaching the next boundary (<= 1).
				uint32_t kind = test_rng_below(&rng, 3);
				b->max[k] = add_at_most(b->min[k], kind == 0 ? 0.0f : kind == 1 ? 1.0f : fminf(half, 1.0f));
			}
			// Every third box touches the previous one face to face on x.
			if (i % 3 == 0) {
				b->min[0] = boxes[i - 1].max[0];
				b->max[0] = add_at_most(b->min[0], 1.0f);
			}
		}
		world = cells_world(boxes, N, dims, ALGO, 3, 0);
		size_t count;
		free(cells_check_step(world, boxes, N, dims, &count));
		cr_assert_eq(bp_world_stats(world).cell_size, sector, "the second scene changed the sector");
		bp_world_destroy(world);
		check_all_threads(boxes, N, dims, 0);
	}
}

// Spans the float range: +-FLT_MAX boxes, points at the ends, one box over
// everything, coordinates near 1e7. Must stay exact and never be unsupported.
Test(shifts, huge_spans_stay_exact, .timeout = 120)
{
	enum { N = 600 };
	static oracle_box boxes[N];
	for (int dims = 2; dims <= 3; ++dims)
		for (int variant = 0; variant < 4; ++variant) {
			test_random_boxes(boxes, N, dims, 50.0f, 2.0f, variant % 2 == 1, 100 + (uint64_t)variant);
			for (uint32_t i = 0; i < N; ++i)
				for (int k = 0; k < dims; ++k) {
					if (variant >= 2) { // spread over +-1e7, a few clustered at each end
						float shift = (i % 2 ? 1e7f : -1e7f);
						boxes[i].min[k] += shift;
						boxes[i].max[k] += shift;
					}
				}
			for (int k = 0; k < dims; ++k) {
				boxes[0].min[k] = -FLT_MAX; // over everything
				boxes[0].max[k] = FLT_MAX;
				boxes[1].min[k] = boxes[1].max[k] = FLT_MAX; // points at the ends
				boxes[2].min[k] = boxes[2].max[k] = -FLT_MAX;
				boxes[3].min[k] = -FLT_MAX; // half the range
				boxes[3].max[k] = 0;
			}
			if (variant == 1) // without the giant box: the ends alone stretch the span
				boxes[0] = boxes[5];
			check_all_threads(boxes, N, dims, variant == 3 ? 1e-3f : 0);
		}
}

// Every box the same point, and all points on a line of integers: zero extents.
Test(shifts, zero_extent_boxes, .timeout = 60)
{
	enum { N = 400 };
	static oracle_box boxes[N];
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint32_t i = 0; i < N; ++i) {
			boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
			for (int k = 0; k < dims; ++k)
				boxes[i].min[k] = boxes[i].max[k] = (float)(i % 7) * (k == 0);
		}
		check_all_threads(boxes, N, dims, 0);
		check_all_threads(boxes, N, dims, 0.25f);
	}
}

// ---- allocation failure -----------------------------------------------------
// A host allocator that refuses the k-th allocation after arming.
static _Atomic uint64_t alloc_calls, alloc_fail_at;

static void *failing_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (atomic_fetch_add(&alloc_calls, 1) + 1 == atomic_load(&alloc_fail_at))
		return NULL;
	size_t a = align < 16 ? 16 : align;
	size_t total = size ? (size + a - 1) / a * a : a;
	return aligned_alloc(a, total);
}

static void failing_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size, (void)align, (void)user;
	free(ptr);
}

// Each allocation of the first and a larger second step fails in turn: the step
// returns BP_ERR_OUT_OF_MEMORY and keeps the previous pairs; a retry matches the
// oracle.
Test(shifts, allocation_failure_leaves_pairs, .timeout = 120)
{
	enum { N = 800 };
	static oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 20.0f, 2.0f, false, 5);
	const bp_allocator hook = {failing_alloc, failing_free, NULL};
	bp_set_allocator(&hook);
	bool failed_any = false, injected = true;
	for (uint64_t k = 1; injected; ++k) {
		cr_assert_lt(k, 1000, "steps never stop allocating");
		injected = false;
		atomic_store(&alloc_fail_at, 0);
		bp_world *world = cells_world(boxes, N / 2, 3, ALGO, 2, 0);
		for (int step = 0; step < 2; ++step) {
			uint32_t n = step ? N : N / 2;
			if (step) {
				for (uint32_t i = N / 2; i < N; ++i) {
					bp_entity_def e = bp_entity_def_default();
					memcpy(e.min, boxes[i].min, sizeof e.min);
					memcpy(e.max, boxes[i].max, sizeof e.max);
					cr_assert_eq(bp_entity_create(world, &e, &(bp_entity){0}), BP_OK);
				}
			}
			size_t before;
			bp_world_pairs(world, &before);
			atomic_store(&alloc_calls, 0);
			atomic_store(&alloc_fail_at, k);
			bp_status status = bp_world_step(world);
			atomic_store(&alloc_fail_at, 0);
			injected |= atomic_load(&alloc_calls) >= k;
			if (status != BP_OK) {
				failed_any = true;
				cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k=%llu: %s", (unsigned long long)k,
					bp_status_string(status));
				size_t after;
				bp_world_pairs(world, &after);
				cr_assert_eq(after, before, "a failed step changed the pairs");
			}
			size_t count;
			free(cells_check_step(world, boxes, n, 3, &count));
		}
		bp_world_destroy(world);
		cr_assert_eq(bp_allocated_bytes(), 0);
	}
	bp_set_allocator(NULL);
	cr_assert(failed_any, "no allocation of a step was ever refused");
}
