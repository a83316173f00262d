// SPDX-License-Identifier: MIT
// The cell build's two-level sort (cells_split.c) against the counting sort and the oracle:
// grid and hash, 2D and 3D, every scene of the cells fixture. Both sorts are stable, so the
// pairs must come out in the same order, for any thread count.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cells_fixture.h"

void bpi_cells_set_split_min(uint32_t entities);

/// The counting sort's pairs (checked against the oracle), then the two-level sort's, forced
/// on from one entity: the oracle's set in the counting sort's order, at threads 2, 3, 8, 1.
static void check_scene(bp_algorithm algorithm, cells_dist dist, int dims, uint32_t n)
{
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	cells_make_scene(boxes, n, dims, dist, true, 17 + (uint64_t)dist);
	bpi_cells_set_split_min(UINT32_MAX); // never: the counting sort
	size_t want_count;
	bp_pair *want = cells_check(boxes, n, dims, algorithm, 1, 0, &want_count);
	bpi_cells_set_split_min(1);
	size_t got_count;
	free(cells_check(boxes, n, dims, algorithm, 1, 0, &got_count));
	cr_assert_eq(got_count, want_count);
	cells_expect_same_order(boxes, n, dims, algorithm, want, want_count);
	bpi_cells_set_split_min(0);
	free(want);
	free(boxes);
}

static void check_all(bp_algorithm algorithm)
{
	for (int dims = 2; dims <= 3; ++dims)
		for (int dist = 0; dist < CELLS_DIST_COUNT; ++dist)
			check_scene(algorithm, (cells_dist)dist, dims, 3000);
}

Test(cells_split, grid_sorts_as_the_counting_sort, .timeout = 120)
{
	check_all(BP_ALGO_GRID);
}

Test(cells_split, hash_sorts_as_the_counting_sort, .timeout = 120)
{
	check_all(BP_ALGO_HASH);
}

Test(cells_split, empty_and_tiny_worlds, .timeout = 60)
{
	for (uint32_t n = 0; n < 5; ++n) {
		check_scene(BP_ALGO_GRID, CELLS_UNIFORM, 3, n);
		check_scene(BP_ALGO_HASH, CELLS_CLUSTERS, 2, n);
	}
}
