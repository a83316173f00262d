// SPDX-License-Identifier: MIT
// The cell build's two-level sort (cells_split.c) against the counting sort and the oracle:
// grid and hash, 2D and 3D, every scene of the cells fixture. Both sorts are stable, so the
// pairs must come out in the same order, for any thread count, over as many cells.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cells_fixture.h"

void bpi_cells_set_split_min(uint32_t entities);

/// One step of a fresh world (against the oracle with `oracle`): its pairs (a copy) and its
/// non-empty cells.
static bp_pair *step_pairs(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads,
	bool oracle, size_t *count, uint64_t *cells)
{
	bp_world *world = cells_world(boxes, n, dims, algorithm, threads, 0);
	bp_pair *copy;
	if (oracle) {
		copy = cells_check_step(world, boxes, n, dims, count);
		cr_assert_eq(bp_world_stats(world).algorithm, algorithm);
	} else {
		cr_assert_eq(bp_world_step(world), BP_OK, "%s", bp_world_last_error(world));
		const bp_pair *pairs = bp_world_pairs(world, count);
		copy = malloc((*count ? *count : 1) * sizeof *copy);
		cr_assert_not_null(copy);
		if (*count)
			memcpy(copy, pairs, *count * sizeof *copy);
	}
	*cells = bp_world_stats(world).cell_count;
	bp_world_destroy(world);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
	return copy;
}

/// The counting sort's pairs (against the oracle with `oracle`), then the two-level sort's,
/// forced on from one entity, at threads 1, 3 and 8: the same pairs in the same order, over
/// as many non-empty cells.
static void check_scene(bp_algorithm algorithm, cells_dist dist, int dims, uint32_t n, bool oracle)
{
	oracle_box *boxes = calloc(n + 1, sizeof *boxes);
	cr_assert_not_null(boxes);
	cells_make_scene(boxes, n, dims, dist, true, 17 + (uint64_t)dist);
	bpi_cells_set_split_min(UINT32_MAX); // never: the counting sort
	size_t want_count;
	uint64_t want_cells;
	bp_pair *want = step_pairs(boxes, n, dims, algorithm, 1, oracle, &want_count, &want_cells);
	bpi_cells_set_split_min(1);
	const int threads[] = {1, 3, 8};
	for (int t = 0; t < 3; ++t) {
		size_t count;
		uint64_t cells;
		bp_pair *got = step_pairs(boxes, n, dims, algorithm, threads[t], false, &count, &cells);
		cr_assert_eq(count, want_count, "%s n=%u threads=%d", cells_dist_name(dist), n, threads[t]);
		cr_assert(count == 0 || memcmp(got, want, count * sizeof *got) == 0, "%s n=%u threads=%d: pair order differs",
			cells_dist_name(dist), n, threads[t]);
		cr_assert_eq(cells, want_cells, "%s n=%u threads=%d: non-empty cells", cells_dist_name(dist), n, threads[t]);
		free(got);
	}
	bpi_cells_set_split_min(0);
	free(want);
	free(boxes);
}

static void check_all(bp_algorithm algorithm)
{
	for (int dims = 2; dims <= 3; ++dims)
		for (int dist = 0; dist < CELLS_DIST_COUNT; ++dist)
			check_scene(algorithm, (cells_dist)dist, dims, 3000, true);
}

Test(cells_split, grid_sorts_as_the_counting_sort, .timeout = 120)
{
	check_all(BP_ALGO_GRID);
}

Test(cells_split, hash_sorts_as_the_counting_sort, .timeout = 120)
{
	check_all(BP_ALGO_HASH);
}

Test(cells_split, many_chunks_of_the_first_level, .timeout = 120)
{
	// Past 2 chunks of 65,536 entities: each group gathers its entities from every chunk.
	check_scene(BP_ALGO_GRID, CELLS_UNIFORM, 3, 140000, false);
	check_scene(BP_ALGO_HASH, CELLS_CLUSTERS, 2, 140000, false);
}

Test(cells_split, tiny_worlds, .timeout = 60)
{
	for (uint32_t n = 1; n < 5; ++n) {
		check_scene(BP_ALGO_GRID, CELLS_UNIFORM, 3, n, true);
		check_scene(BP_ALGO_HASH, CELLS_CLUSTERS, 2, n, true);
	}
}
