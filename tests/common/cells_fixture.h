// SPDX-License-Identifier: MIT
// Scenes that stress cell-based algorithms (grid, hash), and a checked step against the oracle.
#ifndef BP_TEST_CELLS_FIXTURE_H
#define BP_TEST_CELLS_FIXTURE_H

#include "oracle.h"

typedef enum cells_dist {
	CELLS_UNIFORM,   ///< extents in [0.5, 1.5], ~1.5 pairs per entity
	CELLS_CLUSTERS,  ///< a few dense Gaussian-ish blobs
	CELLS_MIXED,     ///< extents spread over 30x (0.1 .. 3)
	CELLS_LINE,      ///< all along the x axis
	CELLS_POINT,     ///< every box is the same point
	CELLS_LATTICE,   ///< unit boxes on an integer lattice, touching exactly on cell faces
	CELLS_FAR_NEG,   ///< uniform, translated to about -3e6
	CELLS_FAR_BOTH,  ///< boxes near -1e7 and near +1e7
	CELLS_HUGE,      ///< one box over the whole scene, many small ones
	CELLS_DIST_COUNT
} cells_dist;

const char *cells_dist_name(cells_dist dist);

/// Fills n boxes of a distribution (with random filters and static kinds when
/// `filters`).
void cells_make_scene(oracle_box *boxes, uint32_t n, int dims, cells_dist dist, bool filters, uint64_t seed);

/// A world holding the boxes in order, with the algorithm, threads and cell size.
bp_world *cells_world(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads,
	float cell_size);

/// Steps the world and asserts its pairs equal the oracle's set, each once, and
/// the stats agree. Returns a malloc'ed copy of the pairs in output order
/// (*count set), for determinism checks.
bp_pair *cells_check_step(bp_world *world, const oracle_box *boxes, uint32_t n, int dims, size_t *count);

/// Steps a fresh world over the boxes and checks it (cells_check_step), then
/// destroys it and checks for leaks. Returns the pairs as cells_check_step.
bp_pair *cells_check(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads,
	float cell_size, size_t *count);

/// One randomized scene for a parameterized test. cell_scale is the world's
/// cell_size (0 = the algorithm's choice).
typedef struct cells_case {
	cells_dist dist;
	uint32_t n;
	int dims;
	bool filters;
	int threads;
	float cell_scale;
	uint64_t seed;
} cells_case;

/// Sizes 0..64 in 2D and 3D, several seeds, rotating distributions and filters.
void cells_test_small_sizes(bp_algorithm algorithm);
/// One case against the oracle.
void cells_test_scene(bp_algorithm algorithm, const cells_case *c);
/// Byte-equal pair lists (same order) for threads 1, 2, 3, 8.
void cells_test_threads_identical(bp_algorithm algorithm, cells_dist dist, int dims, uint32_t n);
/// Fresh worlds at threads 2, 3, 8 and 1 must give exactly `want` (pairs in order).
void cells_expect_same_order(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm,
	const bp_pair *want, size_t want_count);
/// Several steps of moving boxes in one world, each against the oracle.
void cells_test_moving(bp_algorithm algorithm, int dims, int threads);
/// Unit boxes meeting exactly on integer cell faces, against a hand-worked count.
void cells_test_lattice(bp_algorithm algorithm, int dims, float cell_size);

/// Every build of the finder this CPU runs (cells.h) gives the oracle's pairs in
/// the baseline's order.
void cells_test_kernels_identical(bp_algorithm algorithm);

#endif
