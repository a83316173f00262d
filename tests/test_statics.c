// SPDX-License-Identifier: MIT
// Static entities in a tree of their own (src/algorithms/statics.c): a world with few
// dynamic entities gives the oracle's pairs with every algorithm, in 2D and 3D, with
// filters, spheres and mixed sizes; the same pairs in the same order for any thread count;
// the same set as with the tree turned off; no candidate test among static entities alone;
// and, step after step, the oracle's pairs while static entities move (the tree refit),
// come and go (rebuilt) and change kind.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/oracle.h"

/// n boxes, one in `dynamic_share` dynamic, sizes mixed up to `max_extent`, some spheres.
static void make_level(oracle_box *boxes, uint32_t n, int dims, uint32_t dynamic_share, float max_extent,
	uint64_t seed)
{
	test_rng rng = {seed};
	const float world = 60.0f;
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &boxes[i];
		*b = (oracle_box){.category = test_layer(test_rng_below(&rng, 3)), .mask = UINT64_MAX};
		if (test_rng_below(&rng, 5) == 0)
			b->mask = test_layers(test_rng_below(&rng, 8));
		const float extent = test_rng_below(&rng, 20) == 0 ? test_rng_float(&rng, 0.0f, max_extent)
								   : test_rng_float(&rng, 0.0f, 2.0f);
		for (int k = 0; k < dims; ++k) {
			b->min[k] = test_rng_float(&rng, 0.0f, world);
			b->max[k] = b->min[k] + extent;
		}
		b->is_static = test_rng_below(&rng, dynamic_share) != 0;
		b->is_sphere = test_rng_below(&rng, 8) == 0;
	}
}

static uint32_t dynamic_count(const oracle_box *boxes, uint32_t n)
{
	uint32_t count = 0;
	for (uint32_t i = 0; i < n; ++i)
		count += !boxes[i].is_static;
	return count;
}


static void check_level(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, const char *what)
{
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	test_step_result first = test_step_once(boxes, n, dims, algorithm, 1, 0);
	cr_assert(oracle_same_pair_set(first.pairs, first.count, &want), "%s: %zu pairs, want %zu", what, first.count,
		want.count);
	cr_assert_eq(first.stats.static_walks, dynamic_count(boxes, n), "%s: the step did not split", what);
	const int threads[] = {2, 3, 8};
	for (size_t t = 0; t < 3; ++t) {
		test_step_result other = test_step_once(boxes, n, dims, algorithm, threads[t], 0);
		cr_assert_eq(other.count, first.count, "%s: threads=%d", what, threads[t]);
		cr_assert(memcmp(other.pairs, first.pairs, first.count * sizeof(bp_pair)) == 0, "%s: threads=%d order",
			what, threads[t]);
		cr_assert_eq(other.stats.candidate_tests, first.stats.candidate_tests, "%s: threads=%d tests", what,
			threads[t]);
		free(other.pairs);
	}
	test_step_result whole = test_step_once(boxes, n, dims, algorithm, 2, BP_DEBUG_NO_STATIC_TREE);
	cr_assert(oracle_same_pair_set(whole.pairs, whole.count, &want), "%s: without the tree", what);
	cr_assert_eq(whole.stats.static_walks, 0u, "%s", what);
	free(whole.pairs);
	free(first.pairs);
	oracle_pairs_free(&want);
}

static const bp_algorithm algorithms[] = {BP_ALGO_AUTO, BP_ALGO_BRUTE, BP_ALGO_SAP, BP_ALGO_GRID, BP_ALGO_HASH,
	BP_ALGO_BUCKETS, BP_ALGO_CLOSEST, BP_ALGO_QUADTREE, BP_ALGO_SHIFTS};

Test(statics, every_algorithm_equals_the_oracle_with_few_dynamic_entities, .timeout = 300)
{
	const uint32_t sizes[] = {1, 2, 7, 64, 300, 3000};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
		for (int dims = 2; dims <= 3; ++dims)
			for (uint64_t seed = 1; seed <= 3; ++seed) {
				const uint32_t n = sizes[s];
				oracle_box *boxes = calloc(n, sizeof *boxes);
				cr_assert_not_null(boxes);
				make_level(boxes, n, dims, 20, seed == 3 ? 40.0f : 8.0f, seed * 31 + n);
				for (uint32_t i = 0; dynamic_count(boxes, n) * 16 > n; ++i) // the split's share
					boxes[i].is_static = true;
				for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; ++a) {
					if (!bp_algorithm_available(algorithms[a]))
						continue;
					char what[96];
					snprintf(what, sizeof what, "%s %dD n=%u seed=%llu", bp_algorithm_name(algorithms[a]),
						dims, n, (unsigned long long)seed);
					check_level(boxes, n, dims, algorithms[a], what);
				}
				free(boxes);
			}
}

Test(statics, a_level_of_static_entities_alone_tests_no_candidate, .timeout = 60)
{
	const uint32_t n = 5000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	make_level(boxes, n, 3, 1u << 30, 30.0f, 7);
	for (uint32_t i = 0; i < n; ++i)
		boxes[i].is_static = true;
	for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; ++a) {
		if (!bp_algorithm_available(algorithms[a]))
			continue;
		test_step_result r = test_step_once(boxes, n, 3, algorithms[a], 2, 0);
		cr_assert_eq(r.count, 0u);
		cr_assert_eq(r.stats.candidate_tests, 0u, "%s tested static pairs", bp_algorithm_name(algorithms[a]));
		test_step_result whole = test_step_once(boxes, n, 3, algorithms[a], 2, BP_DEBUG_NO_STATIC_TREE);
		cr_assert_eq(whole.count, 0u);
		free(whole.pairs);
		free(r.pairs);
	}
	free(boxes);
}

/// Moves box i by up to `reach` on every axis.
static void nudge(oracle_box *b, int dims, test_rng *rng, float reach)
{
	for (int k = 0; k < dims; ++k) {
		const float d = test_rng_float(rng, -reach, reach);
		b->min[k] += d;
		b->max[k] += d;
	}
}

static void set_box(bp_world *w, uint32_t i, const oracle_box *b)
{
	cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, i), b->min, b->max), BP_OK);
}


/// Steps a world of few dynamic entities while its static ones move a few at a time (refits,
/// then a rebuild once they pile up), all at once (rebuilt), swap kinds, and are destroyed
/// and created: every step equals the oracle and the same world without the tree, and gives
/// the order of a twin whose tree is built anew every step.
static void check_history(bp_algorithm algorithm, int dims, int threads, uint64_t seed)
{
	uint32_t n = 2000;
	oracle_box *boxes = calloc(n + 64, sizeof *boxes);
	cr_assert_not_null(boxes);
	make_level(boxes, n, dims, 24, 12.0f, seed);
	bp_world *w = test_world_from_boxes(boxes, n, dims, algorithm, threads);
	bp_world *plain = test_world_from_boxes(boxes, n, dims, algorithm, threads);
	cr_assert_eq(bp_world_set_debug_flags(plain, BP_DEBUG_NO_STATIC_TREE), BP_OK);
	bp_world *fresh = test_world_from_boxes(boxes, n, dims, algorithm, threads); // its tree built every step
	cr_assert_eq(bp_world_set_debug_flags(fresh, BP_DEBUG_NO_COHERENCE), BP_OK);
	test_rng rng = {seed ^ 0x5eed};
	uint32_t walked = 0;
	for (int step = 0; step < 24; ++step) {
		const int kind = step % 6;
		for (uint32_t i = 0; i < n; ++i) {
			const bool move = boxes[i].is_static ? (kind == 1 && test_rng_below(&rng, 50) == 0) || kind == 4
							     : test_rng_below(&rng, 2) == 0;
			if (move) {
				nudge(&boxes[i], dims, &rng, 1.5f);
				set_box(w, i, &boxes[i]);
				set_box(plain, i, &boxes[i]);
				set_box(fresh, i, &boxes[i]);
			}
		}
		if (kind == 2) { // a static entity turns dynamic and a dynamic one static
			const uint32_t i = test_rng_below(&rng, n);
			boxes[i].is_static = !boxes[i].is_static;
			const bp_kind k = boxes[i].is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
			cr_assert_eq(bp_entity_set_kind(w, bp_world_entity_at(w, i), k), BP_OK);
			cr_assert_eq(bp_entity_set_kind(plain, bp_world_entity_at(plain, i), k), BP_OK);
			cr_assert_eq(bp_entity_set_kind(fresh, bp_world_entity_at(fresh, i), k), BP_OK);
		}
		if (kind == 3) { // an entity goes (the last takes its dense index), and a new static one comes
			const uint32_t i = test_rng_below(&rng, n);
			cr_assert_eq(bp_entity_destroy(w, bp_world_entity_at(w, i)), BP_OK);
			cr_assert_eq(bp_entity_destroy(plain, bp_world_entity_at(plain, i)), BP_OK);
			cr_assert_eq(bp_entity_destroy(fresh, bp_world_entity_at(fresh, i)), BP_OK);
			boxes[i] = boxes[--n];
			make_level(&boxes[n], 1, dims, 1u << 30, 3.0f, seed + (uint64_t)step);
			const bp_entity_def def = oracle_entity_def(&boxes[n]);
			bp_entity e;
			cr_assert_eq(bp_entity_create(w, &def, &e), BP_OK);
			cr_assert_eq(bp_entity_create(plain, &def, &e), BP_OK);
			cr_assert_eq(bp_entity_create(fresh, &def, &e), BP_OK);
			++n;
		}
		walked += oracle_step_both_any_order(w, plain, boxes, n, dims).static_walks;
		cr_assert_eq(bp_world_stats(plain).static_walks, 0u);
		// A refit tree and one built anew give the same pairs in the same order.
		cr_assert_eq(bp_world_step(fresh), BP_OK);
		size_t count, fresh_count;
		const bp_pair *got = bp_world_pairs(w, &count), *again = bp_world_pairs(fresh, &fresh_count);
		cr_assert_eq(count, fresh_count);
		cr_assert(count == 0 || memcmp(got, again, count * sizeof *got) == 0, "step %d: the order hangs on the tree",
			step);
	}
	cr_assert_gt(walked, 0u, "%s: no step split", bp_algorithm_name(algorithm));
	bp_world_destroy(w);
	bp_world_destroy(plain);
	bp_world_destroy(fresh);
	free(boxes);
}

Test(statics, steps_equal_the_oracle_while_static_entities_move_come_and_go, .timeout = 300)
{
	const bp_algorithm some[] = {BP_ALGO_AUTO, BP_ALGO_SAP, BP_ALGO_GRID, BP_ALGO_QUADTREE};
	for (size_t a = 0; a < sizeof some / sizeof some[0]; ++a)
		for (int dims = 2; dims <= 3; ++dims)
			check_history(some[a], dims, 1 + (int)a % 2, 11 + a);
}
