// SPDX-License-Identifier: MIT
// The step core: the algorithm table, the pipeline's candidate-test count, and the
// debug flags that replaced process-wide switches, each against an independent expectation.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/closest.h"
#include "oracle.h"
#include "algorithms/quadtree.h"
#include "world/world_data.h"

Test(step, table_names_round_trip)
{
	for (int i = 0; i < BP_ALGO_COUNT; ++i) {
		bp_algorithm id = (bp_algorithm)i;
		const bpi_algorithm *a = bpi_algorithm_get(id);
		if (id == BP_ALGO_AUTO) {
			cr_assert_null(a);
			cr_assert_str_eq(bp_algorithm_name(id), "auto");
			continue;
		}
		cr_assert_not_null(a, "algorithm %d has no table entry", i);
		cr_assert(a->name && a->build && a->find, "algorithm %d: incomplete entry", i);
		cr_assert_geq(a->index_size, sizeof(bpi_index));
		cr_assert_str_eq(bp_algorithm_name(id), a->name);
		bp_algorithm back;
		cr_assert_eq(bp_algorithm_from_name(a->name, &back), BP_OK);
		cr_assert_eq(back, id);
	}
	bp_algorithm unused;
	cr_assert_eq(bp_algorithm_from_name("nope", &unused), BP_ERR_UNKNOWN_ALGORITHM);
	cr_assert_str_eq(bp_algorithm_name(BP_ALGO_COUNT), "?");
}

// brute tests every pair once, so the chunks' counts must add up to n(n-1)/2
// whatever the chunking and the thread count.
Test(step, brute_candidate_tests_are_every_pair, .timeout = 60)
{
	const uint32_t sizes[] = {0, 1, 2, 31, 32, 33, 65, 1000};
	const int threads[] = {1, 2, 3, 8};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
		uint32_t n = sizes[s];
		oracle_box *boxes = calloc(n ? n : 1, sizeof *boxes);
		cr_assert_not_null(boxes);
		test_random_boxes(boxes, n, 3, 10.0f, 1.0f, false, 7 + n);
		for (size_t t = 0; t < sizeof threads / sizeof threads[0]; ++t) {
			bp_world *w = test_world_from_boxes(boxes, n, 3, BP_ALGO_BRUTE, threads[t]);
			cr_assert_eq(bp_world_step(w), BP_OK);
			bp_frame_stats stats = bp_world_stats(w);
			cr_assert_eq(stats.candidate_tests, (uint64_t)n * (n ? n - 1 : 0) / 2, "n=%u threads=%d: %llu tests", n,
				threads[t], (unsigned long long)stats.candidate_tests);
			cr_assert_eq(stats.entity_count, n);
			bp_world_destroy(w);
		}
		free(boxes);
	}
}

Test(step, debug_flags_are_validated)
{
	bp_world_def def = bp_world_def_default();
	cr_assert_eq(def.debug_flags, 0);
	def.debug_flags = BP_DEBUG_ALL + 1;
	bp_world *w = (bp_world *)&def; // must be reset to NULL on error
	cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT);
	cr_assert_null(w);
	def.debug_flags = BP_DEBUG_NO_SIMD;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	cr_assert_eq(bp_world_debug_flags(w), BP_DEBUG_NO_SIMD);
	cr_assert_eq(bp_world_set_debug_flags(w, 1u << 7), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_last_error(w), "0x80") != NULL, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_world_debug_flags(w), BP_DEBUG_NO_SIMD, "a rejected call changed the flags");
	cr_assert_eq(bp_world_set_debug_flags(w, BP_DEBUG_ALL), BP_OK);
	cr_assert_eq(bp_world_debug_flags(w), BP_DEBUG_ALL);
	cr_assert_eq(bp_world_set_debug_flags(NULL, 0), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_world_debug_flags(NULL), 0);
	bp_world_destroy(w);
}

/// Steps an unchanged scene three times, checking each step against the oracle,
/// and returns a copy of the last step's pairs (the caller frees it).
static bp_pair *three_steps(bp_world *w, const oracle_box *boxes, uint32_t n, size_t *count)
{
	oracle_pairs want = oracle_find_pairs(boxes, n, 3);
	const bp_pair *got = NULL;
	for (int step = 0; step < 3; ++step) {
		cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
		got = bp_world_pairs(w, count);
		cr_assert(oracle_same_pair_set(got, *count, &want));
	}
	oracle_pairs_free(&want);
	bp_pair *copy = malloc((*count ? *count : 1) * sizeof *copy);
	cr_assert_not_null(copy);
	memcpy(copy, got, *count * sizeof *copy);
	return copy;
}

// The flags change how the work is done, never the pairs or their order; and
// NO_COHERENCE really reaches the algorithms that keep state: closest then takes
// the full sort and the quadtree re-inserts every entity on every step.
Test(step, debug_flags_change_the_work_not_the_pairs, .timeout = 120)
{
	const uint32_t n = 3000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	test_random_boxes(boxes, n, 3, 40.0f, 2.0f, true, 99);
	const bp_algorithm algos[] = {BP_ALGO_SAP, BP_ALGO_CLOSEST, BP_ALGO_QUADTREE, BP_ALGO_GRID};
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; ++a) {
		bp_pair *reference = NULL;
		size_t reference_count = 0;
		for (uint32_t flags = 0; flags <= BP_DEBUG_ALL; ++flags) {
			bp_world *w = test_world_from_boxes(boxes, n, 3, algos[a], 2);
			cr_assert_eq(bp_world_set_debug_flags(w, flags), BP_OK);
			size_t count;
			bp_pair *pairs = three_steps(w, boxes, n, &count);
			const bpi_index *index = w->stepper.indexes.of[algos[a]];
			bool coherent = !(flags & BP_DEBUG_NO_COHERENCE);
			if (algos[a] == BP_ALGO_CLOSEST)
				cr_assert_eq(bpi_closest_full_sorts(index), coherent ? 1u : 3u, "flags %u", flags);
			if (algos[a] == BP_ALGO_QUADTREE)
				cr_assert_eq(bpi_quadtree_reinserted(index), coherent ? 0u : n, "flags %u", flags);
			bp_world_destroy(w);
			if (!reference) {
				reference = pairs;
				reference_count = count;
				continue;
			}
			cr_assert_eq(count, reference_count, "%s flags %u", bp_algorithm_name(algos[a]), flags);
			cr_assert(memcmp(pairs, reference, count * sizeof *pairs) == 0, "%s flags %u: order differs",
				bp_algorithm_name(algos[a]), flags);
			free(pairs);
		}
		free(reference);
	}
	free(boxes);
}
