// SPDX-License-Identifier: MIT
// 64-bit categories and masks (docs/design.md "Pair rules"): layers past bit 31 pair, filter
// queries and travel through the setters exactly as the low ones do, against brute force.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "oracle.h"

/// A random layer of bits 32..63 (high) or 0..63.
static uint64_t random_bit(test_rng *rng, bool high)
{
	return UINT64_C(1) << (high ? 32 + test_rng_below(rng, 32) : test_rng_below(rng, 64));
}

/// Categories one bit each; masks one or two bits, all bits, all but the entity's own layer,
/// or 0. With `high` the categories and the one- and two-bit masks lie in the high word, so a
/// filter cut to 32 bits would pair none of them.
static void random_layers(oracle_box *boxes, uint32_t n, bool high, uint64_t seed)
{
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &boxes[i];
		// Few layers, so that pairs are common: a bit from a small set of the chosen range.
		const uint64_t pool = high ? 7 : 11;
		b->category = UINT64_C(1) << (high ? 32 + test_rng_below(&rng, (uint32_t)pool) * 5 % 32
						   : test_rng_below(&rng, (uint32_t)pool) * 6);
		switch (test_rng_below(&rng, 5)) {
		case 0: b->mask = UINT64_MAX; break;
		case 1: b->mask = UINT64_MAX & ~b->category; break;
		case 2: b->mask = 0; break;
		default:
			b->mask = UINT64_C(1) << (high ? 32 + test_rng_below(&rng, (uint32_t)pool) * 5 % 32
						       : test_rng_below(&rng, (uint32_t)pool) * 6);
			b->mask |= test_rng_below(&rng, 2) ? random_bit(&rng, high) : 0;
		}
		b->is_static = test_rng_below(&rng, 6) == 0;
	}
}

static void expect_oracle(bp_world *w, const oracle_box *boxes, uint32_t n, int dims, const char *what)
{
	cr_assert_eq(bp_world_step(w), BP_OK, "%s: %s", what, bp_world_last_error(w));
	size_t count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	cr_assert(want.count > 0, "%s: the scene has pairs", what);
	cr_assert(oracle_same_pair_set(pairs, count, &want), "%s", what);
	oracle_pairs_free(&want);
}

static void every_algorithm(bool high)
{
	enum { N = 1500 };
	oracle_box *boxes = calloc(N, sizeof *boxes);
	for (int dims = 2; dims <= 3; ++dims) {
		float world = dims == 2 ? sqrtf((float)N) * 3 : cbrtf((float)N) * 2.5f;
		test_random_boxes(boxes, N, dims, world, 2.0f, false, 7 + (uint64_t)dims);
		random_layers(boxes, N, high, 11 + (uint64_t)dims);
		for (int a = 0; a < BP_ALGO_COUNT; ++a)
			for (int threads = 1; threads <= 2; ++threads) {
				char what[96];
				snprintf(what, sizeof what, "%s layers, %dD, algorithm %d, %d threads", high ? "high" : "mixed",
					dims, a, threads);
				bp_world *w = test_world_from_boxes(boxes, N, dims, (bp_algorithm)a, threads);
				expect_oracle(w, boxes, N, dims, what);
				bp_world_destroy(w);
			}
	}
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(layers, high_layers_pair_as_brute_force_in_every_algorithm, .timeout = 120) { every_algorithm(true); }
Test(layers, mixed_layers_pair_as_brute_force_in_every_algorithm, .timeout = 120) { every_algorithm(false); }

/// An incremental world keeps resting entities' filters apart (bpi_rest_filter): new high
/// filters set by handle and by index list on some entities must meet the resting ones'.
Test(layers, incremental_rest_filters_keep_the_high_word, .timeout = 60)
{
	enum { N = 3000, K = 40 };
	oracle_box *boxes = calloc(N, sizeof *boxes);
	test_random_boxes(boxes, N, 3, cbrtf((float)N) * 2.5f, 2.0f, false, 5);
	random_layers(boxes, N, true, 6);
	bp_world_def def = bp_world_def_default();
	def.dims = 3;
	def.incremental = true;
	bp_world *w = test_world_from_def(boxes, N, &def);
	expect_oracle(w, boxes, N, 3, "first step");
	expect_oracle(w, boxes, N, 3, "at rest");
	test_rng rng = {8};
	for (int round = 0; round < 4; ++round) {
		uint32_t dense[K];
		bp_entity handles[K];
		uint64_t category[K], mask[K];
		for (uint32_t k = 0; k < K; ++k) {
			dense[k] = test_rng_below(&rng, N);
			handles[k] = bp_world_entity_at(w, dense[k]);
			category[k] = random_bit(&rng, true);
			mask[k] = test_rng_below(&rng, 3) ? random_bit(&rng, true) | random_bit(&rng, true) : UINT64_MAX;
		}
		bp_status s = round % 2 ? bp_entities_set_filters(w, bp_target_handles(K, handles), category, mask) :
					  bp_entities_set_filters(w, bp_target_indices(K, dense), category, mask);
		cr_assert_eq(s, BP_OK, "%s", bp_world_last_error(w));
		for (uint32_t k = 0; k < K; ++k)
			boxes[dense[k]].category = category[k], boxes[dense[k]].mask = mask[k];
		for (uint32_t k = 0; k < K; ++k) {
			bp_entity_def got;
			cr_assert_eq(bp_entity_get(w, handles[k], &got), BP_OK);
			cr_assert(got.category == boxes[dense[k]].category && got.mask == boxes[dense[k]].mask,
				"dense %u reads back %#llx/%#llx", dense[k], (unsigned long long)got.category,
				(unsigned long long)got.mask);
		}
		expect_oracle(w, boxes, N, 3, round % 2 ? "set by handle" : "set by index list");
	}
	bp_world_destroy(w);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// Query filters widened: a layer past bit 31 is seen or not by its own bit, and "all bits"
/// (no layer test) means all 64 of them.
Test(layers, query_filters_read_all_64_bits)
{
	const uint64_t top = UINT64_C(1) << 63, b40 = UINT64_C(1) << 40;
	oracle_box boxes[4] = {
		{{0, 0}, {1, 1}, top, UINT64_MAX, false, false},
		{{0, 0}, {1, 1}, b40, b40, false, false},
		{{0, 0}, {1, 1}, 1, UINT64_MAX, false, false},
		{{0, 0}, {1, 1}, 0, UINT64_MAX, false, false}, // seen only with no layer test
	};
	bp_world *w = test_world_from_boxes(boxes, 4, 2, BP_ALGO_SAP, 1);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	const float lo[2] = {0, 0}, hi[2] = {1, 1};
	struct {
		uint64_t category, mask;
		uint32_t want; ///< bit i: entity i is seen
	} cases[] = {
		{UINT64_MAX, UINT64_MAX, 0xF},          // no layer test
		{UINT64_MAX, UINT64_MAX & ~top, 0x6},   // one high bit clear: the rule applies
		{UINT64_MAX, top, 0x1},                 // the top layer alone
		{b40, UINT64_MAX, 0x7},                 // bit 40 is in the masks of 0, 1 and 2
		{top, b40, 0x0},                        // 1's mask lacks the top bit
		{b40 | 1, b40 | top, 0x3},
		{UINT32_MAX, UINT64_MAX, 0x5},          // the low word only is not all bits
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		bp_query_filter f = bp_query_filter_default();
		f.category = cases[c].category, f.mask = cases[c].mask;
		uint32_t out[4];
		size_t total;
		cr_assert_eq(bp_view_overlap_box(v, lo, hi, &f, out, 4, &total), BP_OK);
		uint32_t seen = 0;
		for (size_t i = 0; i < total; ++i)
			seen |= 1u << out[i];
		cr_assert_eq(seen, cases[c].want, "case %zu: saw %#x, want %#x", c, seen, cases[c].want);
	}
	bp_view_release(v);
	bp_world_destroy(w);
}

/// Step events select pairs by a category past bit 31.
Test(layers, step_events_select_a_high_category)
{
	const uint64_t sensor = UINT64_C(1) << 50;
	oracle_box boxes[3] = {
		{{0, 0}, {2, 2}, sensor, UINT64_MAX, false, false},
		{{1, 1}, {3, 3}, 1, UINT64_MAX, false, false},
		{{1.5f, 1.5f}, {4, 4}, 1, UINT64_MAX, false, false},
	};
	bp_world *w = test_world_from_boxes(boxes, 3, 2, BP_ALGO_GRID, 1);
	cr_assert_eq(bp_world_set_events(w, sensor), BP_OK);
	cr_assert_eq(bp_world_events_categories(w), sensor);
	cr_assert_eq(bp_world_step(w), BP_OK);
	bp_pair_event began[4], ended[4];
	size_t began_count, ended_count;
	cr_assert_eq(bp_world_events(w, began, 4, &began_count, ended, 4, &ended_count), BP_OK);
	cr_assert_eq(began_count, 2, "the sensor's two pairs, not (1, 2)");
	cr_assert_eq(ended_count, 0);
	bp_world_destroy(w);
}
