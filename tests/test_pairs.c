// SPDX-License-Identifier: MIT
// Pair semantics (docs/design.md "Pair rules") for brute against hand-worked cases and the oracle.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>

#include "oracle.h"

static bp_world *world_of(const oracle_box *boxes, uint32_t n, int dims)
{
	bp_world *w = test_world_from_boxes(boxes, n, dims, BP_ALGO_BRUTE, 1);
	cr_assert_eq(bp_world_step(w), BP_OK);
	return w;
}

Test(pairs, touching_boxes_overlap)
{
	oracle_box boxes[3] = {
		{{0, 0, 0}, {1, 1, 1}, 1, UINT64_MAX, false, false},
		{{1, 0, 0}, {2, 1, 1}, 1, UINT64_MAX, false, false}, // shares the face x = 1 with box 0
		{{2.0001f, 0, 0}, {3, 1, 1}, 1, UINT64_MAX, false, false}, // a hair away from box 1
	};
	bp_world *w = world_of(boxes, 3, 3);
	size_t n;
	const bp_pair *p = bp_world_pairs(w, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(p[0].lo, 0);
	cr_assert_eq(p[0].hi, 1);
	bp_world_destroy(w);
}

Test(pairs, zero_extent_points)
{
	oracle_box boxes[3] = {
		{{5, 5}, {5, 5}, 1, UINT64_MAX, false, false}, // a point
		{{5, 5}, {5, 5}, 1, UINT64_MAX, false, false}, // the same point
		{{0, 0}, {5, 4.9f}, 1, UINT64_MAX, false, false}, // reaches x = 5 but not y = 5
	};
	bp_world *w = world_of(boxes, 3, 2);
	size_t n;
	const bp_pair *p = bp_world_pairs(w, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(p[0].lo, 0);
	cr_assert_eq(p[0].hi, 1);
	bp_world_destroy(w);
}

Test(pairs, filters_and_static_pairs)
{
	// 0 and 1 are static, so never paired with each other.
	oracle_box boxes[4] = {
		{{0, 0}, {10, 10}, 1, 1, true, false}, // accepts only category 1
		{{0, 0}, {10, 10}, 1, UINT64_MAX, true, false},
		{{0, 0}, {10, 10}, 2, ~0u, false, false},
		{{0, 0}, {10, 10}, 1, 2, false, false}, // pairs only with category 2 -> only with 2
	};
	bp_world *w = world_of(boxes, 4, 2);
	size_t n;
	const bp_pair *pairs = bp_world_pairs(w, &n);
	oracle_pairs sorted = oracle_sorted_copy(pairs, n);
	// Worked by hand, (a, b): cat a & mask b, cat b & mask a, both static?
	// (0,1) static-static; (0,2) 2&1 = 0; (0,3) 1&2 = 0; (1,2) ok; (1,3) 1&2 = 0;
	// (2,3) 2&2 and 1&~0 -> ok.
	bp_pair want[] = {{1, 2}, {2, 3}};
	cr_assert_eq(sorted.count, 2);
	for (int i = 0; i < 2; ++i) {
		cr_assert_eq(sorted.data[i].lo, want[i].lo);
		cr_assert_eq(sorted.data[i].hi, want[i].hi);
	}
	oracle_pairs_free(&sorted);
	bp_world_destroy(w);
}

Test(pairs, checksum_of_hand_computed_pairs)
{
	// splitmix64 of (1 << 32 | 2): computed by hand from the docs/design.md "Scene and trace formats" steps.
	uint64_t z = ((uint64_t)1 << 32 | 2) + 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	cr_assert_eq(bp_splitmix64((uint64_t)1 << 32 | 2), z);
	// splitmix64(0) is the well-known first output of a zero-seeded stream.
	cr_assert_eq(bp_splitmix64(0), 0xE220A8397B1DCDAFull);
	// The order inside a pair and the order of pairs do not matter; ids map dense indices.
	bp_pair a[] = {{0, 1}, {1, 2}};
	bp_pair b[] = {{2, 1}, {0, 1}};
	uint32_t ids[] = {7, 9, 4};
	cr_assert_eq(bp_pairs_checksum(a, 2, ids), bp_pairs_checksum(b, 2, ids));
	uint64_t want = bp_splitmix64((uint64_t)7 << 32 | 9) + bp_splitmix64((uint64_t)4 << 32 | 9);
	cr_assert_eq(bp_pairs_checksum(a, 2, ids), want);
}

typedef struct random_case {
	uint32_t n;
	int dims;
	bool filters;
	int threads;
} random_case;

ParameterizedTestParameters(pairs, brute_matches_oracle)
{
	static random_case cases[] = {
		{0, 3, false, 1}, {1, 3, false, 1}, {2, 2, false, 1}, {57, 2, true, 2},
		{500, 3, false, 1}, {500, 3, true, 3}, {2000, 2, true, 8}, {2000, 3, false, 2},
	};
	return cr_make_param_array(random_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(random_case *c, pairs, brute_matches_oracle, .timeout = 60)
{
	oracle_box *boxes = calloc(c->n ? c->n : 1, sizeof *boxes);
	float world = c->dims == 2 ? sqrtf((float)c->n) * 4 : cbrtf((float)c->n) * 3;
	test_random_boxes(boxes, c->n, c->dims, world + 1, 2.0f, c->filters, 42 + c->n);
	bp_world *w = test_world_from_boxes(boxes, c->n, c->dims, BP_ALGO_BRUTE, c->threads);
	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t n;
	const bp_pair *pairs = bp_world_pairs(w, &n);
	oracle_pairs want = oracle_find_pairs(boxes, c->n, c->dims);
	cr_assert(oracle_same_pair_set(pairs, n, &want), "n=%u dims=%d", c->n, c->dims);
	bp_frame_stats stats = bp_world_stats(w);
	cr_assert_eq(stats.pair_count, want.count);
	cr_assert_eq(stats.algorithm, BP_ALGO_BRUTE);
	oracle_pairs_free(&want);
	bp_world_destroy(w);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
}
