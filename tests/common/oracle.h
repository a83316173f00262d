// SPDX-License-Identifier: MIT
// Test fixtures: an independent pair oracle over plain arrays, random scenes, pair-set comparison.
#ifndef BP_TEST_ORACLE_H
#define BP_TEST_ORACLE_H

#include <broadphase/broadphase.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// A scene in plain arrays, independent of the library's store. Array-of-structs
/// on purpose, so the oracle shares no layout or code with the library.
typedef struct oracle_box {
	float min[3], max[3];
	uint64_t category, mask;
	bool is_static;
	/// A sphere: the largest ball centred in min/max (bp_shape in world.h).
	bool is_sphere;
} oracle_box;

typedef struct oracle_pairs {
	bp_pair *data;
	size_t count;
} oracle_pairs;

/// All pairs (i < j) by the docs/design.md "Pair rules" definition, written from the text of the
/// definition, sorted by (lo, hi). Free with oracle_pairs_free.
oracle_pairs oracle_find_pairs(const oracle_box *boxes, uint32_t n, int dims);
void oracle_pairs_free(oracle_pairs *pairs);
/// Every minimum-image pair (i < j) of boxes (no spheres) on the torus
/// [0, period[k]) per axis (world.h, `periodic`), sorted by (i, j).
oracle_pairs oracle_find_periodic_pairs(const oracle_box *boxes, uint32_t n, int dims, const float period[3]);

/// Sorted copy of a pair list (the caller frees with oracle_pairs_free).
oracle_pairs oracle_sorted_copy(const bp_pair *pairs, size_t count);
/// True when both lists hold the same pairs (order ignored); prints the first
/// difference to stderr otherwise.
bool oracle_same_pair_set(const bp_pair *got, size_t got_count, const oracle_pairs *want);

/// Steps `world` and `plain` (which must hold the same entities, sorting their pairs)
/// and asserts that the first's pairs are those of `boxes` by the oracle and, byte
/// for byte, the second's. Returns the first's stats.
bp_frame_stats oracle_step_both(bp_world *world, bp_world *plain, const oracle_box *boxes, uint32_t n, int dims);
/// The same when the two worlds may give the pairs in different orders (one splits off its
/// static entities, the other does not): both are held to the oracle as sets.
bp_frame_stats oracle_step_both_any_order(bp_world *world, bp_world *plain, const oracle_box *boxes, uint32_t n,
	int dims);

/// One step of a fresh world of the boxes: its pairs (malloc'ed, free them) and statistics.
typedef struct test_step_result {
	bp_pair *pairs;
	size_t count;
	bp_frame_stats stats;
} test_step_result;
test_step_result test_step_once(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads,
	uint32_t debug_flags);

/// Deterministic PRNG for tests (splitmix64 stream).
typedef struct test_rng {
	uint64_t state;
} test_rng;
uint64_t test_rng_next(test_rng *rng);
/// Uniform float in [lo, hi).
float test_rng_float(test_rng *rng, float lo, float hi);
uint32_t test_rng_below(test_rng *rng, uint32_t bound);
/// Layer k of three (0, 1, 2) as a 64-bit category: bits 0, 33 and 63, so random filters
/// meet the low word, the high word and the top bit.
uint64_t test_layer(uint32_t k);
/// The layers of bits 0-2 of `small` (test_layer of each bit set).
uint64_t test_layers(uint32_t small);
/// dims uniform floats in [lo, hi), each rounded down to an integer with `snap`
/// (integer grids make ties and touching boxes common).
void test_rng_vec(test_rng *rng, float *v, int dims, float lo, float hi, bool snap);

/// qsort order of query hits: by distance (the ray parameter for rays), then
/// by dense index, as the library orders them.
int oracle_compare_hits(const void *x, const void *y);

/// Random boxes: n boxes in [0, world)^dims with extents in [0, max_extent].
/// With `filters`, random categories/masks/static kinds as well.
void test_random_boxes(oracle_box *boxes, uint32_t n, int dims, float world, float max_extent, bool filters,
	uint64_t seed);

/// Mixed scene: n entities in [0, world)^dims, each a sphere of radius in
/// [0, max_radius] (bounds = centre -+ radius in float) with probability
/// sphere_percent / 100, else a box with extents in [0, 2 max_radius].
void test_random_spheres(oracle_box *boxes, uint32_t n, int dims, float world, float max_radius, int sphere_percent,
	uint64_t seed);

/// The entity def of a box: its bounds, filter, kind and shape.
bp_entity_def oracle_entity_def(const oracle_box *box);
/// Creates a world from `def` holding the boxes, in order (dense index = box
/// index, user key = box index).
bp_world *test_world_from_def(const oracle_box *boxes, uint32_t n, const bp_world_def *def);
/// Creates a world of `dims` with the boxes, in order (dense index = box index).
bp_world *test_world_from_boxes(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads);

#endif
