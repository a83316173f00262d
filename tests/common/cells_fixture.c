// SPDX-License-Identifier: MIT
// Scenes that stress cell-based algorithms (grid, hash), and a checked step against the oracle.
#include "cells_fixture.h"
#include "algorithms/cells.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *cells_dist_name(cells_dist dist)
{
	static const char *const names[CELLS_DIST_COUNT] = {
		"uniform", "clusters", "mixed", "line", "point", "lattice", "far_neg", "far_both", "huge",
	};
	return (unsigned)dist < CELLS_DIST_COUNT ? names[dist] : "?";
}

static void set_box(oracle_box *b, int dims, const float *lo, const float *ext)
{
	for (int k = 0; k < dims; ++k) {
		b->min[k] = lo[k];
		b->max[k] = lo[k] + ext[k];
	}
}

void cells_make_scene(oracle_box *boxes, uint32_t n, int dims, cells_dist dist, bool filters, uint64_t seed)
{
	test_rng rng = {seed * 7919 + (uint64_t)dist};
	// Side of a region of volume 8n/3 (3D) or 4n (2D): ~1.5 pairs per entity
	// for extents in [0.5, 1.5].
	float side = dims == 3 ? cbrtf(8.0f * (float)(n + 1) / 3.0f) : sqrtf(4.0f * (float)(n + 1));
	uint32_t lattice = (uint32_t)ceil(dims == 3 ? cbrt((double)n) : sqrt((double)n));
	float centre[8][3];
	for (int c = 0; c < 8; ++c)
		for (int k = 0; k < 3; ++k)
			centre[c][k] = test_rng_float(&rng, 0, side);
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &boxes[i];
		*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
		float lo[3] = {0, 0, 0}, ext[3] = {0, 0, 0};
		for (int k = 0; k < dims; ++k) {
			lo[k] = test_rng_float(&rng, 0, side);
			ext[k] = test_rng_float(&rng, 0.5f, 1.5f);
		}
		switch (dist) {
		case CELLS_UNIFORM:
			break;
		case CELLS_CLUSTERS: {
			int c = (int)test_rng_below(&rng, 8);
			for (int k = 0; k < dims; ++k) {
				float u = test_rng_float(&rng, -1, 1) * test_rng_float(&rng, 0, 1);
				lo[k] = centre[c][k] + u * side * 0.1f;
			}
			break;
		}
		case CELLS_MIXED:
			for (int k = 0; k < dims; ++k)
				ext[k] = test_rng_float(&rng, 0.1f, 3.0f);
			break;
		case CELLS_LINE:
			for (int k = 1; k < dims; ++k)
				lo[k] = test_rng_float(&rng, 0, 2);
			lo[0] = test_rng_float(&rng, 0, (float)n);
			break;
		case CELLS_POINT:
			for (int k = 0; k < dims; ++k) {
				lo[k] = 3.25f;
				ext[k] = 0;
			}
			break;
		case CELLS_LATTICE: {
			uint32_t j = i;
			for (int k = 0; k < dims; ++k) {
				lo[k] = (float)(j % lattice);
				ext[k] = 1;
				j /= lattice;
			}
			break;
		}
		case CELLS_FAR_NEG:
			for (int k = 0; k < dims; ++k)
				lo[k] -= 3e6f;
			break;
		case CELLS_FAR_BOTH: {
			float shift = i % 2 ? 1e7f : -1e7f;
			for (int k = 0; k < dims; ++k)
				lo[k] = shift + test_rng_float(&rng, 0, 64);
			for (int k = 0; k < dims; ++k)
				ext[k] = test_rng_float(&rng, 0, 4);
			break;
		}
		case CELLS_HUGE:
			if (i == n / 2)
				for (int k = 0; k < dims; ++k) {
					lo[k] = -1;
					ext[k] = side + 2;
				}
			else
				for (int k = 0; k < dims; ++k)
					ext[k] *= 0.2f;
			break;
		default:
			break;
		}
		set_box(b, dims, lo, ext);
		if (filters) {
			b->category = test_layer(test_rng_below(&rng, 3));
			b->mask = test_rng_below(&rng, 4) ? UINT64_MAX : test_layers(test_rng_below(&rng, 8));
			b->is_static = test_rng_below(&rng, 4) == 0;
		}
	}
}

bp_world *cells_world(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads,
	float cell_size)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.algorithm = algorithm;
	def.thread_count = threads;
	def.cell_size = cell_size;
	return test_world_from_def(boxes, n, &def);
}

bp_pair *cells_check_step(bp_world *world, const oracle_box *boxes, uint32_t n, int dims, size_t *count)
{
	cr_assert_eq(bp_world_step(world), BP_OK, "%s", bp_world_last_error(world));
	size_t got_count;
	const bp_pair *got = bp_world_pairs(world, &got_count);
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	bp_frame_stats stats = bp_world_stats(world);
	cr_assert(oracle_same_pair_set(got, got_count, &want), "%s n=%u dims=%d: %zu pairs, want %zu",
		bp_algorithm_name(stats.algorithm), n, dims, got_count, want.count);
	cr_assert_eq(stats.pair_count, want.count);
	cr_assert_geq(stats.candidate_tests, want.count);
	bool dynamic = false; // a step that splits off its static entities builds cells over the others
	for (uint32_t i = 0; i < n; ++i)
		dynamic |= !boxes[i].is_static;
	if (dynamic)
		cr_assert_gt(stats.cell_count, 0);
	oracle_pairs_free(&want);
	bp_pair *copy = malloc((got_count ? got_count : 1) * sizeof *copy);
	cr_assert_not_null(copy);
	if (got_count)
		memcpy(copy, got, got_count * sizeof *copy);
	*count = got_count;
	return copy;
}

bp_pair *cells_check(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads,
	float cell_size, size_t *count)
{
	bp_world *world = cells_world(boxes, n, dims, algorithm, threads, cell_size);
	bp_pair *pairs = cells_check_step(world, boxes, n, dims, count);
	cr_assert_eq(bp_world_stats(world).algorithm, algorithm);
	bp_world_destroy(world);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
	return pairs;
}

void cells_test_small_sizes(bp_algorithm algorithm)
{
	oracle_box boxes[64];
	for (int dims = 2; dims <= 3; ++dims)
		for (uint32_t n = 0; n <= 64; ++n)
			for (uint64_t seed = 1; seed <= 4; ++seed) {
				cells_dist dist = (cells_dist)((n + seed) % CELLS_DIST_COUNT);
				cells_make_scene(boxes, n, dims, dist, seed % 2 == 0, seed * 100 + n);
				size_t count;
				free(cells_check(boxes, n, dims, algorithm, 1 + (int)(seed % 3), 0, &count));
			}
}

void cells_test_scene(bp_algorithm algorithm, const cells_case *c)
{
	oracle_box *boxes = calloc(c->n ? c->n : 1, sizeof *boxes);
	cr_assert_not_null(boxes);
	cells_make_scene(boxes, c->n, c->dims, c->dist, c->filters, c->seed);
	size_t count;
	free(cells_check(boxes, c->n, c->dims, algorithm, c->threads, c->cell_scale, &count));
	free(boxes);
}

void cells_test_threads_identical(bp_algorithm algorithm, cells_dist dist, int dims, uint32_t n)
{
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	cells_make_scene(boxes, n, dims, dist, true, 5);
	size_t want_count;
	bp_pair *want = cells_check(boxes, n, dims, algorithm, 1, 0, &want_count);
	// Checked against the oracle once above; the others must match it byte for byte.
	cells_expect_same_order(boxes, n, dims, algorithm, want, want_count);
	free(want);
	free(boxes);
}

void cells_expect_same_order(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm,
	const bp_pair *want, size_t want_count)
{
	const int threads[] = {2, 3, 8, 1};
	for (int t = 0; t < 4; ++t) {
		bp_world *world = cells_world(boxes, n, dims, algorithm, threads[t], 0);
		cr_assert_eq(bp_world_step(world), BP_OK);
		size_t count;
		const bp_pair *got = bp_world_pairs(world, &count);
		cr_assert_eq(count, want_count);
		cr_assert(count == 0 || memcmp(got, want, count * sizeof *got) == 0, "threads=%d: pair order differs", threads[t]);
		bp_world_destroy(world);
	}
}

void cells_test_moving(bp_algorithm algorithm, int dims, int threads)
{
	const uint32_t n = 3000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	float *velocity = calloc((size_t)n * 3, sizeof *velocity);
	cr_assert(boxes && velocity);
	cells_make_scene(boxes, n, dims, CELLS_MIXED, true, 11);
	test_rng rng = {99};
	for (size_t i = 0; i < (size_t)n * 3; ++i)
		velocity[i] = test_rng_float(&rng, -0.7f, 0.7f);
	bp_world *world = cells_world(boxes, n, dims, algorithm, threads, 0);
	float *lo[3], *hi[3];
	for (int k = 0; k < 3; ++k) {
		lo[k] = calloc(n, sizeof(float));
		hi[k] = calloc(n, sizeof(float));
		cr_assert(lo[k] && hi[k]);
	}
	for (int step = 0; step < 6; ++step) {
		if (step > 0) {
			// Move every box, and let the world grow by a few boxes each step.
			for (uint32_t i = 0; i < n; ++i)
				for (int k = 0; k < dims; ++k) {
					boxes[i].min[k] += velocity[i * 3 + k] * (float)step;
					boxes[i].max[k] += velocity[i * 3 + k] * (float)step;
				}
			for (uint32_t i = 0; i < n; ++i)
				for (int k = 0; k < dims; ++k) {
					lo[k][i] = boxes[i].min[k];
					hi[k][i] = boxes[i].max[k];
				}
			bp_bounds_arrays arrays = {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]};
			cr_assert_eq(bp_entities_set_bounds(world, bp_target_range(0, n), &arrays), BP_OK, "%s", bp_world_last_error(world));
		}
		size_t count;
		free(cells_check_step(world, boxes, n, dims, &count));
	}
	bp_world_destroy(world);
	for (int k = 0; k < 3; ++k) {
		free(lo[k]);
		free(hi[k]);
	}
	free(velocity);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// k^dims unit boxes [i, i + 1] on the integer lattice: two touch iff their
// lattice points differ by at most 1 on every axis. Worked count: for each
// non-zero offset d in {-1,0,1}^dims there are prod(k - |d_axis|) ordered
// pairs; halve for unordered. k = 4, 3D: 26 offsets -> (6*48 + 12*36 + 8*27) / 2
// = (288 + 432 + 216) / 2 = 468. 2D, k = 4: (4*12 + 4*9) / 2 = 42.
void cells_test_lattice(bp_algorithm algorithm, int dims, float cell_size)
{
	const uint32_t k = 4, n = dims == 3 ? 64 : 16;
	oracle_box boxes[64];
	cells_make_scene(boxes, n, dims, CELLS_LATTICE, false, 1);
	for (uint32_t i = 0; i < n; ++i)
		for (int a = 0; a < dims; ++a)
			cr_assert_lt(boxes[i].min[a], (float)k);
	size_t count;
	free(cells_check(boxes, n, dims, algorithm, 2, cell_size, &count));
	cr_assert_eq(count, dims == 3 ? 468u : 42u);
}

void cells_test_kernels_identical(bp_algorithm algorithm)
{
	const int best = bpi_cells_kernel();
	const cells_dist dists[] = {CELLS_UNIFORM, CELLS_MIXED, CELLS_CLUSTERS, CELLS_HUGE, CELLS_LATTICE};
	const uint32_t n = 4000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (size_t d = 0; d < sizeof dists / sizeof *dists; ++d)
		for (int dims = 2; dims <= 3; ++dims) {
			cells_make_scene(boxes, n, dims, dists[d], d % 2 == 0, 40 + d);
			size_t want_count;
			bpi_cells_set_kernel_cap(BPI_CELLS_KERNEL_BASELINE);
			bp_pair *want = cells_check(boxes, n, dims, algorithm, 2, 0, &want_count);
			// Each newer build the CPU has, checked against the oracle and byte for
			// byte against the baseline's output.
			for (int kernel = BPI_CELLS_KERNEL_BASELINE + 1; kernel <= best; ++kernel) {
				bpi_cells_set_kernel_cap(kernel);
				cr_assert_eq(bpi_cells_kernel(), kernel);
				size_t count;
				bp_pair *got = cells_check(boxes, n, dims, algorithm, 2, 0, &count);
				cr_assert_eq(count, want_count);
				cr_assert(memcmp(got, want, count * sizeof *got) == 0, "%s %dD: %s differs from the baseline",
					cells_dist_name(dists[d]), dims, bpi_cells_kernel_name(kernel));
				free(got);
			}
			free(want);
		}
	bpi_cells_set_kernel_cap(BPI_CELLS_KERNEL_AVX512);
	free(boxes);
}
