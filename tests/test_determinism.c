// SPDX-License-Identifier: MIT
// Determinism: every algorithm gives the same pairs in the same order for 1..8 threads
// and repeated runs, and that list equals the oracle's pair set.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

typedef struct determinism_case {
	uint32_t n;
	int dims;
	bool filters;
	bool clustered;
} determinism_case;

/// Pulls boxes toward a few centres so cells and sweep chunks get uneven work.
static void cluster_boxes(oracle_box *boxes, uint32_t n, int dims, uint64_t seed)
{
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		float centre = (float)(i % 5) * 40.0f;
		for (int k = 0; k < dims; ++k) {
			float extent = boxes[i].max[k] - boxes[i].min[k];
			boxes[i].min[k] = centre + test_rng_float(&rng, -6.0f, 6.0f);
			boxes[i].max[k] = boxes[i].min[k] + extent;
		}
	}
}

ParameterizedTestParameters(determinism, all_algorithms_all_thread_counts)
{
	static determinism_case cases[] = {
		{3000, 3, false, false},
		{3000, 2, true, false},
		{4000, 3, true, true},
		{4000, 2, false, true},
	};
	return cr_make_param_array(determinism_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(determinism_case *c, determinism, all_algorithms_all_thread_counts, .timeout = 300)
{
	oracle_box *boxes = calloc(c->n, sizeof *boxes);
	float world = c->dims == 2 ? sqrtf((float)c->n) * 3 : cbrtf((float)c->n) * 2.5f;
	test_random_boxes(boxes, c->n, c->dims, world, 2.0f, c->filters, 1000 + c->n + (uint64_t)c->dims);
	if (c->clustered)
		cluster_boxes(boxes, c->n, c->dims, 77);
	oracle_pairs want = oracle_find_pairs(boxes, c->n, c->dims);

	for (int a = BP_ALGO_BRUTE; a < BP_ALGO_COUNT; ++a) {
		if (!bp_algorithm_available((bp_algorithm)a))
			continue;
		bp_world *w = test_world_from_boxes(boxes, c->n, c->dims, (bp_algorithm)a, 1);
		cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
		size_t first_count;
		const bp_pair *first = bp_world_pairs(w, &first_count);
		cr_assert(oracle_same_pair_set(first, first_count, &want), "%s differs from the oracle",
			bp_algorithm_name((bp_algorithm)a));
		bp_pair *reference = malloc((first_count ? first_count : 1) * sizeof *reference);
		memcpy(reference, first, first_count * sizeof *reference);

		for (int threads = 1; threads <= 8; ++threads) {
			for (int run = 0; run < 2; ++run) {
				cr_assert_eq(bp_world_set_thread_count(w, threads), BP_OK);
				cr_assert_eq(bp_world_step(w), BP_OK);
				size_t count;
				const bp_pair *pairs = bp_world_pairs(w, &count);
				cr_assert_eq(count, first_count, "%s threads=%d", bp_algorithm_name((bp_algorithm)a), threads);
				cr_assert(memcmp(pairs, reference, count * sizeof *pairs) == 0,
					"%s: pair order differs with %d threads (run %d)", bp_algorithm_name((bp_algorithm)a),
					threads, run);
				cr_assert_eq(bp_world_stats(w).thread_count, threads);
			}
		}
		free(reference);
		bp_world_destroy(w);
	}
	oracle_pairs_free(&want);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}
