// SPDX-License-Identifier: MIT
// sap against the brute-force oracle on many scene shapes, byte-equal output for
// 1, 2, 3 and 8 threads and for the scalar and AVX2 sweeps, and moving scenes
// (the temporal-coherence path) with entities created and destroyed between steps.
#define _POSIX_C_SOURCE 200112L // setenv, to run the scalar sweep
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

typedef enum scene_kind {
	SCENE_UNIFORM,
	SCENE_CLUSTERED,
	SCENE_LINE,
	SCENE_MIXED,
	SCENE_ONE_POINT,
	SCENE_LATTICE,
	SCENE_FAR, ///< uniform around -3e6, where float steps are 0.25
	SCENE_COUNT
} scene_kind;

static const char *const scene_names[SCENE_COUNT] = {
	"uniform", "clustered", "line", "mixed", "one_point", "lattice", "far",
};

// Roughly 1-3 overlaps per box for every n: the world edge grows with n.
static float world_edge(uint32_t n, int dims)
{
	return dims == 3 ? 4.0f * cbrtf((float)n + 1.0f) : 4.0f * sqrtf((float)n + 1.0f);
}

static void random_filters(oracle_box *b, test_rng *rng)
{
	b->category = test_layer(test_rng_below(rng, 3));
	b->mask = test_rng_below(rng, 4) ? UINT64_MAX : test_layers(test_rng_below(rng, 8));
	b->is_static = test_rng_below(rng, 3) == 0;
}

static void make_scene(oracle_box *boxes, uint32_t n, int dims, scene_kind kind, bool filters, uint64_t seed)
{
	test_rng rng = {seed * 0x9E3779B97F4A7C15ull + (uint64_t)kind};
	const float edge = world_edge(n, dims);
	float centres[16][3];
	for (int c = 0; c < 16; ++c)
		for (int k = 0; k < 3; ++k)
			centres[c][k] = test_rng_float(&rng, 0.0f, edge);
	const uint32_t side = dims == 3 ? (uint32_t)ceilf(cbrtf((float)n)) : (uint32_t)ceilf(sqrtf((float)n));
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &boxes[i];
		*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int k = 0; k < dims; ++k) {
			float lo, extent;
			switch (kind) {
			case SCENE_CLUSTERED: { // sum of three uniforms: a bell around one of 16 centres
				const float *c = centres[i % 16];
				float g = test_rng_float(&rng, -1, 1) + test_rng_float(&rng, -1, 1) + test_rng_float(&rng, -1, 1);
				lo = c[k] + g * edge * 0.05f;
				extent = test_rng_float(&rng, 0.0f, 2.0f);
				break;
			}
			case SCENE_LINE: // long along x, thin on the other axes
				lo = k == 0 ? test_rng_float(&rng, 0.0f, edge * edge) : test_rng_float(&rng, 0.0f, 3.0f);
				extent = test_rng_float(&rng, 0.0f, 4.0f);
				break;
			case SCENE_MIXED:
				lo = test_rng_float(&rng, 0.0f, edge);
				extent = (i % 20 == 7) ? test_rng_float(&rng, 10.0f, 40.0f) : test_rng_float(&rng, 0.0f, 2.0f);
				break;
			case SCENE_ONE_POINT:
				lo = 1.5f;
				extent = 0.0f;
				break;
			case SCENE_LATTICE: { // unit cells on integer coordinates: neighbours touch exactly
				uint32_t coord = k == 0 ? i % side : k == 1 ? (i / side) % side : i / (side * side);
				lo = (float)coord;
				extent = 1.0f;
				break;
			}
			case SCENE_FAR:
				lo = -3e6f + test_rng_float(&rng, 0.0f, edge * 4.0f);
				extent = (float)test_rng_below(&rng, 5) * 0.25f; // multiples of the float step here
				break;
			default:
				lo = test_rng_float(&rng, 0.0f, edge);
				extent = test_rng_float(&rng, 0.0f, 3.0f);
				break;
			}
			b->min[k] = lo;
			b->max[k] = lo + extent;
		}
		if (filters)
			random_filters(b, &rng);
	}
}

static test_step_result run_sap(const oracle_box *boxes, uint32_t n, int dims, int threads, uint32_t debug_flags)
{
	return test_step_once(boxes, n, dims, BP_ALGO_SAP, threads, debug_flags);
}

// sap == oracle as sets; the lists for 1, 2, 3 and 8 threads and for the scalar
// sweep are byte-equal to each other.
static void check_scene(const oracle_box *boxes, uint32_t n, int dims, const char *what)
{
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	test_step_result first = run_sap(boxes, n, dims, 1, 0);
	cr_assert(oracle_same_pair_set(first.pairs, first.count, &want), "%s: sap differs from the oracle", what);
	cr_assert_eq(first.stats.algorithm, BP_ALGO_SAP);
	// cell_count of sap over every entity: the non-empty regions, at least one per 32 boxes
	// (sap_regions.c), and exactly one when there are under 64 boxes. (A step that splits
	// off its static entities has the regions of the others.)
	test_step_result whole = run_sap(boxes, n, dims, 1, BP_DEBUG_NO_STATIC_TREE);
	cr_assert(oracle_same_pair_set(whole.pairs, whole.count, &want), "%s: sap over every entity differs", what);
	const uint64_t max_regions = n / 32 > 1 ? n / 32 : 1;
	cr_assert(n == 0 ? whole.stats.cell_count == 0 : whole.stats.cell_count >= 1 && whole.stats.cell_count <= max_regions,
		"%s: cell_count %llu", what, (unsigned long long)whole.stats.cell_count);
	free(whole.pairs);
	cr_assert_geq(first.stats.candidate_tests, first.count, "%s: fewer tests than pairs", what);
	const int threads[] = {2, 3, 8};
	for (size_t t = 0; t < 3; ++t) {
		test_step_result other = run_sap(boxes, n, dims, threads[t], 0);
		cr_assert_eq(other.count, first.count, "%s: threads=%d", what, threads[t]);
		cr_assert_eq(memcmp(other.pairs, first.pairs, first.count * sizeof(bp_pair)), 0,
			"%s: threads=%d order differs", what, threads[t]);
		cr_assert_eq(other.stats.candidate_tests, first.stats.candidate_tests);
		free(other.pairs);
	}
	test_step_result scalar = run_sap(boxes, n, dims, 2, BP_DEBUG_NO_SIMD);
	cr_assert_eq(scalar.count, first.count, "%s: scalar sweep", what);
	cr_assert_eq(memcmp(scalar.pairs, first.pairs, first.count * sizeof(bp_pair)), 0, "%s: scalar order", what);
	cr_assert_eq(scalar.stats.candidate_tests, first.stats.candidate_tests, "%s: scalar tests", what);
	free(scalar.pairs);
	free(first.pairs);
	oracle_pairs_free(&want);
}

static void check_kind(scene_kind kind, int dims, bool filters, const uint32_t *sizes, size_t size_count,
	int seeds)
{
	for (size_t s = 0; s < size_count; ++s) {
		uint32_t n = sizes[s];
		oracle_box *boxes = malloc((n ? n : 1) * sizeof *boxes);
		for (int seed = 1; seed <= seeds; ++seed) {
			make_scene(boxes, n, dims, kind, filters, (uint64_t)seed);
			char what[96];
			snprintf(what, sizeof what, "%s %dD n=%u seed=%d%s", scene_names[kind], dims, n, seed,
				filters ? " filtered" : "");
			check_scene(boxes, n, dims, what);
		}
		free(boxes);
	}
}

static void check_all_small(scene_kind kind)
{
	uint32_t sizes[65];
	for (uint32_t n = 0; n <= 64; ++n)
		sizes[n] = n;
	for (int dims = 2; dims <= 3; ++dims)
		for (int filters = 0; filters <= 1; ++filters)
			check_kind(kind, dims, filters, sizes, 65, 2);
}

static void check_all_large(scene_kind kind)
{
	const uint32_t sizes[] = {500, 5000};
	for (int dims = 2; dims <= 3; ++dims)
		for (int filters = 0; filters <= 1; ++filters)
			check_kind(kind, dims, filters, sizes, 2, 2);
}

Test(sap, uniform_small, .timeout = 120) { check_all_small(SCENE_UNIFORM); }
Test(sap, uniform_large, .timeout = 240) { check_all_large(SCENE_UNIFORM); }
Test(sap, clustered, .timeout = 240) { check_all_small(SCENE_CLUSTERED); check_all_large(SCENE_CLUSTERED); }
Test(sap, line_along_x, .timeout = 240) { check_all_small(SCENE_LINE); check_all_large(SCENE_LINE); }
Test(sap, mixed_sizes, .timeout = 240) { check_all_small(SCENE_MIXED); check_all_large(SCENE_MIXED); }
Test(sap, touching_lattice, .timeout = 240) { check_all_small(SCENE_LATTICE); check_all_large(SCENE_LATTICE); }
Test(sap, near_minus_3e6, .timeout = 240) { check_all_small(SCENE_FAR); check_all_large(SCENE_FAR); }

Test(sap, all_boxes_at_one_point, .timeout = 120)
{
	// n points at one spot: every pair overlaps, n(n-1)/2 of them (a 300-point
	// scene gives 44850); every equal min must pair exactly once.
	check_all_small(SCENE_ONE_POINT);
	const uint32_t sizes[] = {300};
	check_kind(SCENE_ONE_POINT, 3, false, sizes, 1, 1);
}

Test(sap, lattice_hand_count, .timeout = 60)
{
	// A 10 x 10 lattice of unit squares [i, i+1] x [j, j+1]: each square touches its
	// 8 neighbours (edges and corners), so pairs = horizontal 9*10 + vertical 10*9
	// + diagonal 2*9*9 = 342.
	oracle_box boxes[100];
	for (uint32_t i = 0; i < 100; ++i)
		boxes[i] = (oracle_box){{(float)(i % 10), (float)(i / 10)}, {(float)(i % 10 + 1), (float)(i / 10 + 1)}, 1,
			UINT32_MAX, false, false};
	test_step_result r = run_sap(boxes, 100, 2, 2, 0);
	cr_assert_eq(r.count, 342);
	free(r.pairs);
	check_scene(boxes, 100, 2, "lattice 10x10");
}

// Moves every box by up to ~5% of its extent (plus occasional larger jumps), in place.
static void move_boxes(oracle_box *boxes, uint32_t n, int dims, test_rng *rng, float jump)
{
	for (uint32_t i = 0; i < n; ++i) {
		for (int k = 0; k < dims; ++k) {
			float extent = boxes[i].max[k] - boxes[i].min[k];
			float d = test_rng_float(rng, -0.05f, 0.05f) * (extent > 0 ? extent : 1.0f);
			if (test_rng_below(rng, 100) == 0)
				d += test_rng_float(rng, -jump, jump);
			boxes[i].min[k] += d;
			boxes[i].max[k] = boxes[i].min[k] + extent;
		}
	}
}

static void set_all_bounds(bp_world *w, const oracle_box *boxes, uint32_t n)
{
	for (uint32_t i = 0; i < n; ++i)
		cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, i), boxes[i].min, boxes[i].max), BP_OK);
}

// The stepped world's pairs: equal to the oracle, and byte-equal to a fresh
// world's (no history), since the sorted order is a function of the scene alone.
static void check_step(bp_world *w, const oracle_box *boxes, uint32_t n, int dims, int step)
{
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	size_t count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	cr_assert(oracle_same_pair_set(pairs, count, &want), "step %d: differs from the oracle", step);
	test_step_result fresh = run_sap(boxes, n, dims, 1, 0);
	cr_assert_eq(fresh.count, count);
	cr_assert_eq(memcmp(fresh.pairs, pairs, count * sizeof *pairs), 0, "step %d: order depends on history", step);
	free(fresh.pairs);
	oracle_pairs_free(&want);
}

Test(sap, moving_scene_coherence, .timeout = 240)
{
	for (int dims = 2; dims <= 3; ++dims) {
		const uint32_t sizes[] = {40, 3000, 70000 / (uint32_t)dims};
		for (size_t s = 0; s < 3; ++s) {
			uint32_t n = sizes[s];
			oracle_box *boxes = malloc(n * sizeof *boxes);
			make_scene(boxes, n, dims, SCENE_UNIFORM, s == 1, 9);
			bp_world *w = test_world_from_boxes(boxes, n, dims, BP_ALGO_SAP, 2);
			test_rng rng = {77};
			int steps = n > 10000 ? 3 : 8;
			for (int step = 0; step < steps; ++step) {
				check_step(w, boxes, n, dims, step);
				move_boxes(boxes, n, dims, &rng, step == 4 ? world_edge(n, dims) : 2.0f);
				set_all_bounds(w, boxes, n);
			}
			bp_world_destroy(w);
			free(boxes);
		}
	}
}

Test(sap, entities_created_and_destroyed, .timeout = 240)
{
	const int dims = 3;
	uint32_t n = 2000, capacity = 4000;
	oracle_box *boxes = malloc(capacity * sizeof *boxes);
	make_scene(boxes, n, dims, SCENE_MIXED, true, 5);
	bp_world *w = test_world_from_boxes(boxes, n, dims, BP_ALGO_SAP, 3);
	test_rng rng = {123};
	oracle_box spare[200];
	make_scene(spare, 200, dims, SCENE_MIXED, true, 6);
	for (int step = 0; step < 10; ++step) {
		check_step(w, boxes, n, dims, step);
		move_boxes(boxes, n, dims, &rng, 1.0f);
		set_all_bounds(w, boxes, n);
		// Destroy some (swap-remove: the last dense entity moves into the hole) and
		// create some; on odd steps as many as destroyed, so the count stays equal
		// while the entities behind the dense indices change.
		uint32_t destroyed = 1 + test_rng_below(&rng, 40);
		for (uint32_t d = 0; d < destroyed; ++d) {
			uint32_t victim = test_rng_below(&rng, n);
			cr_assert_eq(bp_entity_destroy(w, bp_world_entity_at(w, victim)), BP_OK);
			boxes[victim] = boxes[--n];
		}
		uint32_t created = step % 2 ? destroyed : test_rng_below(&rng, 80);
		for (uint32_t c = 0; c < created; ++c) {
			oracle_box b = spare[test_rng_below(&rng, 200)];
			bp_entity_def def = bp_entity_def_default();
			memcpy(def.min, b.min, sizeof def.min);
			memcpy(def.max, b.max, sizeof def.max);
			def.category = b.category;
			def.mask = b.mask;
			def.kind = b.is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
			bp_entity e;
			cr_assert_eq(bp_entity_create(w, &def, &e), BP_OK);
			boxes[n++] = b;
		}
		cr_assert_eq(bp_world_entity_count(w), n);
	}
	check_step(w, boxes, n, dims, 10);
	bp_world_destroy(w);
	free(boxes);
}

// Region grid (sap_regions.c): scenes built so the grid has many regions and boxes
// meet its cell boundaries in every way. Each is checked against the oracle, for
// 1, 2, 3 and 8 threads and the scalar sweep (check_scene), and must really use
// more than one region, or the test would only repeat the plain sweep's.
static void check_regions(const oracle_box *boxes, uint32_t n, int dims, const char *what)
{
	check_scene(boxes, n, dims, what);
	test_step_result r = run_sap(boxes, n, dims, 1, 0);
	cr_assert_gt(r.stats.cell_count, 1, "%s: one region only", what);
	free(r.pairs);
}

Test(sap_regions, lattice_on_cell_boundaries, .timeout = 240)
{
	// Integer lattices of integer-sized boxes: every extent is `size`, so the cell
	// edge is 4 * size, an integer, and the origin is 0; box faces fall exactly on
	// cell boundaries and neighbours touch there.
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint32_t size = 1; size <= 2; ++size) {
			const uint32_t side = dims == 3 ? 24 : 120;
			const uint32_t n = dims == 3 ? side * side * side : side * side;
			oracle_box *boxes = malloc(n * sizeof *boxes);
			for (uint32_t i = 0; i < n; ++i) {
				uint32_t c[3] = {i % side, (i / side) % side, i / (side * side)};
				boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
				for (int k = 0; k < dims; ++k) {
					boxes[i].min[k] = (float)(c[k] * size);
					boxes[i].max[k] = (float)((c[k] + 1) * size);
				}
			}
			char what[64];
			snprintf(what, sizeof what, "lattice %dD size %u", dims, size);
			check_regions(boxes, n, dims, what);
			free(boxes);
		}
	}
}

// Mostly small boxes (extent `small`) plus every 97th box `big` times larger: with
// small << big the region edge (4x the median extent) is much smaller than the big
// boxes, which span many regions.
static void make_sized(oracle_box *boxes, uint32_t n, int dims, float world, float small, float big, uint64_t seed,
	bool filters)
{
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
		float extent = i % 97 == 5 ? big : small;
		for (int k = 0; k < dims; ++k) {
			boxes[i].min[k] = test_rng_float(&rng, 0.0f, world);
			boxes[i].max[k] = boxes[i].min[k] + extent * test_rng_float(&rng, 0.5f, 1.0f);
		}
		if (filters)
			random_filters(&boxes[i], &rng);
	}
}

Test(sap_regions, boxes_spanning_many_regions, .timeout = 240)
{
	const uint32_t n = 6000;
	oracle_box *boxes = malloc(n * sizeof *boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		for (int filters = 0; filters <= 1; ++filters) {
			const float world = dims == 3 ? 40.0f : 200.0f;
			make_sized(boxes, n, dims, world, 1.0f, 12.0f, 11 + (uint64_t)dims, filters);
			check_regions(boxes, n, dims, filters ? "12x boxes filtered" : "12x boxes");
		}
	}
	free(boxes);
}

Test(sap_regions, edges_much_smaller_and_larger_than_boxes, .timeout = 240)
{
	const uint32_t n = 4000;
	oracle_box *boxes = malloc(n * sizeof *boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		// Near-points (median extent 1e-3) far apart: the edge is set by the region
		// cap and is thousands of times the boxes; a few boxes of 30 still meet.
		make_sized(boxes, n, dims, 100.0f, 1e-3f, 30.0f, 21, false);
		check_regions(boxes, n, dims, "edge >> boxes");
		// Zero extents on every box but the big ones: the median is 0.
		make_sized(boxes, n, dims, 50.0f, 0.0f, 20.0f, 22, false);
		check_regions(boxes, n, dims, "zero extents");
		// Dense: extents 1 in a world of 12, so many boxes cover several cells.
		make_sized(boxes, n, dims, dims == 3 ? 12.0f : 40.0f, 1.0f, 6.0f, 23, true);
		check_regions(boxes, n, dims, "dense");
	}
	free(boxes);
}

Test(sap_regions, clamped_coordinates_near_1e7, .timeout = 240)
{
	// Clusters at -1e7 and +1e7 and a spread between: float steps are 1 there, so
	// (v - origin) * inv_edge rounds and the top cell is reached by clamping; boxes
	// with equal bounds in float land in the same cells.
	const uint32_t n = 5000;
	oracle_box *boxes = malloc(n * sizeof *boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		test_rng rng = {31 + (uint64_t)dims};
		for (uint32_t i = 0; i < n; ++i) {
			boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
			for (int k = 0; k < dims; ++k) {
				uint32_t where = test_rng_below(&rng, 3);
				float lo = where == 0   ? -1e7f + (float)test_rng_below(&rng, 64)
					   : where == 1 ? 1e7f - (float)test_rng_below(&rng, 64)
							: test_rng_float(&rng, -1e7f, 1e7f);
				boxes[i].min[k] = lo;
				boxes[i].max[k] = lo + (float)test_rng_below(&rng, 4);
			}
			if (i % 500 == 3) { // ten boxes over the whole range: in every region, 45 pairs
				for (int k = 0; k < dims; ++k) {
					boxes[i].min[k] = -1e7f;
					boxes[i].max[k] = 1e7f;
				}
			}
		}
		check_regions(boxes, n, dims, dims == 3 ? "near 1e7 3D" : "near 1e7 2D");
	}
	free(boxes);
}
