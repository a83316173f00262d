// SPDX-License-Identifier: MIT
// Brute-force answers to view queries over oracle_box (an array of structs: shares nothing
// with the view), and a checker of a view's queries against them.
#include "query_oracle.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/// memcmp that accepts NULL pointers for zero lengths (views and buffers may hold NULL then).
bool oracle_same_bytes(const void *a, const void *b, size_t n)
{
	return n == 0 || memcmp(a, b, n) == 0;
}

size_t oracle_query_box(const oracle_box *b, uint32_t n, int dims, const float *lo, const float *hi, uint32_t *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i) {
		bool hit = true;
		for (int k = 0; k < dims; ++k)
			hit = hit && b[i].min[k] <= hi[k] && lo[k] <= b[i].max[k];
		if (hit)
			out[count++] = i;
	}
	return count;
}

float oracle_distance2(const oracle_box *b, int dims, const float *p)
{
	float d2 = 0;
	for (int k = 0; k < dims; ++k) {
		float g = 0;
		if (p[k] < b->min[k])
			g = b->min[k] - p[k];
		else if (p[k] > b->max[k])
			g = p[k] - b->max[k];
		d2 += g * g;
	}
	return d2;
}

size_t oracle_query_sphere(const oracle_box *b, uint32_t n, int dims, const float *c, float r, uint32_t *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i)
		if (oracle_distance2(&b[i], dims, c) <= r * r)
			out[count++] = i;
	return count;
}

/// Every hit of the ray, sorted by (t, index). The interval of t inside each slab,
/// intersected with [0, max_t]; an axis with d = 0 needs the origin inside the slab.
size_t oracle_query_ray(const oracle_box *b, uint32_t n, int dims, const float *o, const float *d, float max_t,
	bp_hit *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i) {
		float enter = 0, leave = max_t;
		bool hit = true;
		for (int k = 0; k < dims && hit; ++k) {
			if (d[k] == 0) {
				hit = o[k] >= b[i].min[k] && o[k] <= b[i].max[k];
				continue;
			}
			float ta = (b[i].min[k] - o[k]) / d[k], tb = (b[i].max[k] - o[k]) / d[k];
			enter = fmaxf(enter, fminf(ta, tb));
			leave = fminf(leave, fmaxf(ta, tb));
			hit = enter <= leave;
		}
		if (hit)
			out[count++] = (bp_hit){i, enter};
	}
	qsort(out, count, sizeof *out, oracle_compare_hits);
	return count;
}

size_t oracle_query_nearest(const oracle_box *b, uint32_t n, int dims, const float *p, uint32_t k, bp_hit *out)
{
	bp_hit *all = malloc((n ? n : 1) * sizeof *all);
	for (uint32_t i = 0; i < n; ++i)
		all[i] = (bp_hit){i, oracle_distance2(&b[i], dims, p)};
	qsort(all, n, sizeof *all, oracle_compare_hits);
	size_t count = k < n ? k : n;
	for (size_t i = 0; i < count; ++i)
		out[i] = (bp_hit){all[i].index, sqrtf(all[i].distance)};
	free(all);
	return count;
}

void oracle_check_box_query(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, const float *lo,
	const float *hi, bool point)
{
	uint32_t *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
	size_t want_n = oracle_query_box(boxes, n, dims, lo, hi, want), got_n = 0;
	bp_status status = point ? bp_view_overlap_point(v, lo, NULL, got, n + 1, &got_n)
	                         : bp_view_overlap_box(v, lo, hi, NULL, got, n + 1, &got_n);
	cr_assert_eq(status, BP_OK);
	cr_assert_eq(got_n, want_n, "%s query: %zu hits, brute force %zu", point ? "point" : "box", got_n, want_n);
	cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got));
	free(want);
	free(got);
}

void oracle_check_view_queries(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, bool snap, uint64_t seed)
{
	test_rng rng = {seed};
	float world = dims == 2 ? sqrtf((float)n) * 2.5f : cbrtf((float)n) * 2.5f;
	uint32_t *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
	bp_hit *want_hits = malloc((n + 8) * sizeof *want_hits), *got_hits = malloc((n + 8) * sizeof *got_hits);
	for (int q = 0; q < 40; ++q) {
		float lo[3], hi[3], ext[3], p[3], d[3];
		test_rng_vec(&rng, lo, dims, -2, world + 2, snap);
		test_rng_vec(&rng, ext, dims, 0, 4, snap);
		for (int k = 0; k < dims; ++k)
			hi[k] = lo[k] + ext[k];
		oracle_check_box_query(v, boxes, n, dims, lo, hi, false);
		test_rng_vec(&rng, p, dims, -1, world + 1, snap);
		oracle_check_box_query(v, boxes, n, dims, p, p, true);

		float radius = snap ? (float)test_rng_below(&rng, 4) : test_rng_float(&rng, 0, 4);
		size_t want_n = oracle_query_sphere(boxes, n, dims, p, radius, want), got_n = 0;
		cr_assert_eq(bp_view_overlap_sphere(v, p, radius, NULL, got, n + 1, &got_n), BP_OK);
		cr_assert_eq(got_n, want_n, "sphere: %zu vs %zu", got_n, want_n);
		cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got));

		// Rays: random directions, with some components zeroed (axis-parallel rays).
		test_rng_vec(&rng, p, dims, -3, world + 3, false);
		test_rng_vec(&rng, d, dims, -1, 1, false);
		for (int k = 0; k < dims; ++k)
			if (test_rng_below(&rng, 3) == 0)
				d[k] = 0;
		float max_t = test_rng_below(&rng, 2) ? INFINITY : test_rng_float(&rng, 0, world);
		size_t want_hits_n = oracle_query_ray(boxes, n, dims, p, d, max_t, want_hits), got_hits_n = 0;
		cr_assert_eq(bp_view_cast_ray(v, p, d, max_t, NULL, got_hits, n + 8, &got_hits_n), BP_OK);
		cr_assert_eq(got_hits_n, want_hits_n, "ray: %zu vs %zu hits", got_hits_n, want_hits_n);
		for (size_t i = 0; i < want_hits_n; ++i) {
			cr_assert_eq(got_hits[i].index, want_hits[i].index, "ray hit %zu", i);
			cr_assert_eq(got_hits[i].distance, want_hits[i].distance);
		}
		bp_hit closest;
		bool found;
		cr_assert_eq(bp_view_cast_ray_closest(v, p, d, max_t, NULL, &closest, &found), BP_OK);
		cr_assert_eq(found, want_hits_n > 0);
		if (found) {
			cr_assert_eq(closest.index, want_hits[0].index);
			cr_assert_eq(closest.distance, want_hits[0].distance);
		}
		// A short buffer gets the nearest hits and the full count.
		if (want_hits_n > 2) {
			cr_assert_eq(bp_view_cast_ray(v, p, d, max_t, NULL, got_hits, 2, &got_hits_n), BP_ERR_OUT_OF_RANGE);
			cr_assert_eq(got_hits_n, want_hits_n);
			cr_assert_eq(got_hits[0].index, want_hits[0].index);
			cr_assert_eq(got_hits[1].index, want_hits[1].index);
		}

		uint32_t ks[] = {0, 1, 7, n + 3};
		uint32_t k = ks[q % 4];
		test_rng_vec(&rng, p, dims, -2, world + 2, snap);
		want_n = oracle_query_nearest(boxes, n, dims, p, k, want_hits);
		cr_assert_eq(bp_view_nearest(v, p, k, NULL, got_hits, &got_n), BP_OK);
		cr_assert_eq(got_n, want_n, "k=%u: %zu vs %zu", k, got_n, want_n);
		for (size_t i = 0; i < want_n; ++i) {
			cr_assert_eq(got_hits[i].index, want_hits[i].index, "nearest %zu of k=%u", i, k);
			cr_assert_eq(got_hits[i].distance, want_hits[i].distance);
		}
	}
	free(want);
	free(got);
	free(want_hits);
	free(got_hits);
}

