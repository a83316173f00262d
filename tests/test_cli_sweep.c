// SPDX-License-Identifier: MIT
// The oracle of `bp verify` (tools/bp/cli_sweep.c) against brute force, the test oracle's and
// the library's, on random scenes: touching boxes and points on integer grids, filters,
// statics, spheres, boxes that reach across the whole scene, and flat scenes.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_sweep.h"
#include "oracle.h"

TestSuite(cli_sweep, .timeout = 120);

typedef struct scene_kind {
	int dims;
	float world, max_extent;
	bool snap;          ///< integer bounds: touching boxes and zero extents are common
	bool filters;       ///< random categories, masks and statics
	int sphere_percent; ///< entities that are spheres
	int wide_percent;   ///< boxes that reach across the whole scene on one axis
	bool flat;          ///< every entity at the same z (3D) or y (2D)
} scene_kind;

static void random_box(oracle_box *b, const scene_kind *kind, test_rng *rng)
{
	*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
	for (int k = 0; k < kind->dims; ++k) {
		float lo = test_rng_float(rng, 0, kind->world), extent = test_rng_float(rng, 0, kind->max_extent);
		b->min[k] = kind->snap ? floorf(lo) : lo;
		b->max[k] = b->min[k] + (kind->snap ? floorf(extent) : extent);
	}
	if ((int)test_rng_below(rng, 100) < kind->wide_percent) {
		int k = (int)test_rng_below(rng, (uint32_t)kind->dims);
		b->min[k] = -1;
		b->max[k] = kind->world + kind->max_extent;
	}
	if (kind->flat)
		b->min[kind->dims - 1] = b->max[kind->dims - 1] = 1;
	if ((int)test_rng_below(rng, 100) < kind->sphere_percent) {
		// Equal half extents about the box's centre, so the shape test decides some pairs.
		float r = (b->max[0] - b->min[0]) / 2;
		for (int k = 0; k < kind->dims; ++k) {
			float c = (b->min[k] + b->max[k]) / 2;
			b->min[k] = c - r;
			b->max[k] = c + r;
		}
		b->is_sphere = true;
	}
	if (kind->filters) {
		b->category = test_layer(test_rng_below(rng, 3));
		b->mask = test_rng_below(rng, 4) ? UINT64_MAX : test_layers(test_rng_below(rng, 8));
		b->is_static = test_rng_below(rng, 4) == 0;
	}
}

typedef struct columns {
	float *min[3], *max[3];
	uint64_t *category, *mask;
	bp_kind *kinds;
	bp_shape *shapes;
} columns;

/// The boxes as the structure of arrays a trace state holds.
static sweep_entities entities_of(const oracle_box *boxes, uint32_t n, int dims, columns *c)
{
	for (int k = 0; k < 3; ++k) {
		c->min[k] = calloc(n, sizeof(float));
		c->max[k] = calloc(n, sizeof(float));
	}
	c->category = calloc(n, sizeof(uint64_t));
	c->mask = calloc(n, sizeof(uint64_t));
	c->kinds = calloc(n, sizeof(bp_kind));
	c->shapes = calloc(n, sizeof(bp_shape));
	for (uint32_t i = 0; i < n; ++i) {
		for (int k = 0; k < 3; ++k) {
			c->min[k][i] = boxes[i].min[k];
			c->max[k][i] = boxes[i].max[k];
		}
		c->category[i] = boxes[i].category;
		c->mask[i] = boxes[i].mask;
		c->kinds[i] = boxes[i].is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		c->shapes[i] = boxes[i].is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	}
	return (sweep_entities){.dims = dims, .count = n,
		.bounds = {c->min[0], c->min[1], c->min[2], c->max[0], c->max[1], c->max[2]},
		.category = c->category, .mask = c->mask, .kinds = c->kinds, .shapes = c->shapes};
}

static void columns_free(columns *c)
{
	for (int k = 0; k < 3; ++k) {
		free(c->min[k]);
		free(c->max[k]);
	}
	free(c->category);
	free(c->mask);
	free(c->kinds);
	free(c->shapes);
}

static void expect_same_list(const sweep_pairs *got, const bp_pair *want, size_t want_count, const char *against,
	uint64_t seed)
{
	cr_assert_eq(got->count, want_count, "seed %llu: %zu pairs, %s %zu", (unsigned long long)seed, got->count, against,
		want_count);
	for (size_t i = 0; i < want_count; ++i)
		cr_assert(got->data[i].lo == want[i].lo && got->data[i].hi == want[i].hi,
			"seed %llu: pair %zu is (%u, %u), %s (%u, %u)", (unsigned long long)seed, i, got->data[i].lo,
			got->data[i].hi, against, want[i].lo, want[i].hi);
}

/// The sweep's sorted list equals the test oracle's and, sorted, the library's brute force.
static void expect_sweep_is_brute(const scene_kind *kind, uint32_t n, uint64_t seed)
{
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i)
		random_box(&boxes[i], kind, &rng);
	columns c;
	sweep_entities e = entities_of(boxes, n, kind->dims, &c);
	sweep_pairs got = {0};
	cr_assert(sweep_find_pairs(&e, &got));

	oracle_pairs want = oracle_find_pairs(boxes, n, kind->dims);
	expect_same_list(&got, want.data, want.count, "the test oracle", seed);
	bp_world_def def = bp_world_def_default();
	def.dims = kind->dims;
	def.algorithm = BP_ALGO_BRUTE;
	def.canonical_pairs = true;
	bp_world *world = test_world_from_def(boxes, n, &def);
	cr_assert_eq(bp_world_step(world), BP_OK);
	size_t count;
	const bp_pair *brute = bp_world_pairs(world, &count);
	expect_same_list(&got, brute, count, "the library's brute force", seed);

	bp_world_destroy(world);
	oracle_pairs_free(&want);
	sweep_pairs_free(&got);
	columns_free(&c);
	free(boxes);
}

static void expect_on_seeds(const scene_kind *kind, uint32_t n, int seeds)
{
	for (int s = 1; s <= seeds; ++s)
		expect_sweep_is_brute(kind, n, (uint64_t)s * 7919 + (uint64_t)kind->dims);
}

Test(cli_sweep, touching_boxes_and_points_on_an_integer_grid)
{
	for (int dims = 2; dims <= 3; ++dims)
		expect_on_seeds(&(scene_kind){.dims = dims, .world = 40, .max_extent = 4, .snap = true}, 600, 8);
}

Test(cli_sweep, filters_and_statics)
{
	for (int dims = 2; dims <= 3; ++dims)
		expect_on_seeds(&(scene_kind){.dims = dims, .world = 30, .max_extent = 5, .snap = true, .filters = true}, 600, 8);
}

Test(cli_sweep, spheres_with_boxes)
{
	for (int dims = 2; dims <= 3; ++dims) {
		expect_on_seeds(&(scene_kind){.dims = dims, .world = 50, .max_extent = 6, .sphere_percent = 50}, 800, 6);
		expect_on_seeds(&(scene_kind){.dims = dims, .world = 30, .max_extent = 6, .snap = true, .filters = true,
					.sphere_percent = 40}, 600, 6);
	}
}

// Boxes that reach across the scene are copied into every slab; the pair must still come once.
Test(cli_sweep, wide_boxes_reach_every_slab)
{
	for (int dims = 2; dims <= 3; ++dims) {
		expect_on_seeds(&(scene_kind){.dims = dims, .world = 60, .max_extent = 3, .snap = true, .filters = true,
					.wide_percent = 3}, 1000, 6);
		expect_on_seeds(&(scene_kind){.dims = dims, .world = 60, .max_extent = 3, .wide_percent = 60}, 500, 4);
	}
}

Test(cli_sweep, flat_scenes_and_tiny_ones)
{
	for (int dims = 2; dims <= 3; ++dims) {
		expect_on_seeds(&(scene_kind){.dims = dims, .world = 40, .max_extent = 3, .snap = true, .flat = true}, 600, 4);
		for (uint32_t n = 0; n <= 3; ++n)
			expect_on_seeds(&(scene_kind){.dims = dims, .world = 4, .max_extent = 3, .snap = true}, n, 4);
	}
}

// Default settings (NULL arrays) read as category 1, mask all, dynamic, box.
Test(cli_sweep, null_settings_are_the_entity_defaults)
{
	const float min_x[] = {0, 1, 5}, max_x[] = {1, 2, 6}, min_y[] = {0, 1, 0}, max_y[] = {1, 2, 1};
	sweep_entities e = {.dims = 2, .count = 3, .bounds = {min_x, min_y, NULL, max_x, max_y, NULL}};
	sweep_pairs got = {0};
	cr_assert(sweep_find_pairs(&e, &got));
	cr_assert(got.count == 1 && got.data[0].lo == 0 && got.data[0].hi == 1);
	sweep_pairs_free(&got);
}
