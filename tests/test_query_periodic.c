// SPDX-License-Identifier: MIT
// Queries in periodic worlds (docs/design.md "Queries") against brute force
// over the shape's images: every move by whole periods in a window wider than any image that can
// meet an entity, each moved coordinate rounded once to float from double.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query_oracle.h"

enum { WINDOW = 8 }; ///< moves -WINDOW .. WINDOW per axis: entities and queries lie within +-3 periods

static float moved(float x, int k, float period)
{
	return (float)((double)x + (double)k * (double)period);
}

/// Whether some move of [lo, hi] by whole periods within the window meets box b on
/// axis a. Moves on different axes are chosen apart, so an image of the box meets b
/// exactly when every axis has such a move: the window's images, one axis at a time.
static bool axis_meets(const oracle_box *b, int a, const float *lo, const float *hi, float period)
{
	for (int k = -WINDOW; k <= WINDOW; ++k)
		if (b->min[a] <= moved(hi[a], k, period) && moved(lo[a], k, period) <= b->max[a])
			return true;
	return false;
}

/// The image of point p within the window nearest box b: per axis, the move whose
/// coordinate lies least far outside b on that axis. oracle_distance2 sums the squared
/// gaps of the axes in rounded arithmetic, which never decreases as a gap grows, so no
/// other image of the window is nearer.
static void nearest_image(const oracle_box *b, int dims, const float *period, const float *p, float *out)
{
	for (int a = 0; a < dims; ++a) {
		float best_gap = INFINITY;
		for (int k = -WINDOW; k <= WINDOW; ++k) {
			const float x = moved(p[a], k, period[a]);
			const float gap = x < b->min[a] ? b->min[a] - x : x > b->max[a] ? x - b->max[a] : 0.0f;
			if (gap < best_gap)
				best_gap = gap, out[a] = x;
		}
	}
}

/// Brute force: the entities some image of the box [lo, hi] (or of the ball c, r when
/// c is not NULL) meets, ascending.
static size_t wrapped_oracle(const oracle_box *boxes, uint32_t n, int dims, const float *period, const float *lo,
	const float *hi, const float *c, float r, uint32_t *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i) {
		bool met = true;
		if (c) {
			float mc[3];
			nearest_image(&boxes[i], dims, period, c, mc);
			met = oracle_distance2(&boxes[i], dims, mc) <= r * r;
		} else {
			for (int a = 0; a < dims && met; ++a)
				met = axis_meets(&boxes[i], a, lo, hi, period[a]);
		}
		if (met)
			out[count++] = i;
	}
	return count;
}

/// Brute force: the k nearest by the least distance over the point's images.
static size_t wrapped_nearest_oracle(const oracle_box *boxes, uint32_t n, int dims, const float *period,
	const float *p, uint32_t k, bp_hit *out)
{
	bp_hit *all = malloc((n + 1) * sizeof *all);
	for (uint32_t i = 0; i < n; ++i) {
		float mp[3];
		nearest_image(&boxes[i], dims, period, p, mp);
		all[i] = (bp_hit){i, oracle_distance2(&boxes[i], dims, mp)};
	}
	qsort(all, n, sizeof *all, oracle_compare_hits);
	const size_t count = k < n ? k : n;
	for (size_t i = 0; i < count; ++i)
		out[i] = (bp_hit){all[i].index, sqrtf(all[i].distance)};
	free(all);
	return count;
}

static bool count_visit(uint32_t e, void *user)
{
	uint32_t *seen = user;
	seen[e]++;
	return true;
}

/// Entities within `spread` periods of the origin (extents up to a third of a period,
/// integer corners when snap: touching across the seam), queries around them.
static void run_periodic(int dims, uint32_t n, float spread, bool snap, uint64_t seed)
{
	const float period[3] = {10.0f, 12.0f, 8.0f};
	oracle_box *boxes = malloc(n * sizeof *boxes);
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int a = 0; a < dims; ++a) {
			boxes[i].min[a] = test_rng_float(&rng, -spread * period[a], spread * period[a]);
			boxes[i].max[a] = boxes[i].min[a] + test_rng_float(&rng, 0.0f, period[a] / 3.0f);
			if (snap)
				boxes[i].min[a] = floorf(boxes[i].min[a]), boxes[i].max[a] = floorf(boxes[i].max[a]);
		}
	}
	bp_world_def def = bp_world_def_default();
	def.dims = dims, def.periodic = true;
	memcpy(def.period, period, sizeof period);
	bp_world *w = test_world_from_def(boxes, n, &def);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK, "%s", bp_world_last_error(w));
	uint32_t *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
	uint32_t *seen = calloc(n, sizeof *seen);
	bp_hit *want_hits = malloc((n + 1) * sizeof *want_hits), *got_hits = malloc((n + 1) * sizeof *got_hits);
	for (int q = 0; q < 60; ++q) {
		float lo[3], hi[3], c[3];
		for (int a = 0; a < dims; ++a) {
			lo[a] = test_rng_float(&rng, -3.0f * period[a], 3.0f * period[a]);
			hi[a] = lo[a] + test_rng_float(&rng, 0.0f, q % 5 == 0 ? 1.5f * period[a] : period[a] / 3.0f);
			if (snap)
				lo[a] = floorf(lo[a]), hi[a] = floorf(hi[a]);
			c[a] = lo[a];
		}
		const float r = test_rng_float(&rng, 0.0f, period[0] / 2.0f);
		size_t want_n = wrapped_oracle(boxes, n, dims, period, lo, hi, NULL, 0, want), got_n = 0;
		cr_assert_eq(bp_view_query_aabb(v, lo, hi, got, n + 1, &got_n), BP_OK);
		cr_assert_eq(got_n, want_n, "dims %d box %d: %zu hits, brute force %zu", dims, q, got_n, want_n);
		cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got));
		memset(seen, 0, n * sizeof *seen);
		cr_assert_eq(bp_view_visit_aabb(v, lo, hi, NULL, count_visit, seen), BP_OK);
		for (size_t k = 0, at = 0; k < n; ++k) {
			const bool wanted = at < want_n && want[at] == k;
			cr_assert_eq(seen[k], wanted ? 1u : 0u, "box %d visited entity %zu %u times", q, k, seen[k]);
			at += wanted;
		}
		if (want_n > 1) { // a short buffer: the lowest, and the full count
			cr_assert_eq(bp_view_query_aabb(v, lo, hi, got, 1, &got_n), BP_ERR_OUT_OF_RANGE);
			cr_assert_eq(got_n, want_n);
			cr_assert_eq(got[0], want[0]);
		}
		want_n = wrapped_oracle(boxes, n, dims, period, NULL, NULL, c, r, want);
		cr_assert_eq(bp_view_query_sphere(v, c, r, got, n + 1, &got_n), BP_OK);
		cr_assert_eq(got_n, want_n, "dims %d sphere %d: %zu hits, brute force %zu", dims, q, got_n, want_n);
		cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got));
		const uint32_t k = 1 + (uint32_t)q % 9;
		want_n = wrapped_nearest_oracle(boxes, n, dims, period, c, k, want_hits);
		cr_assert_eq(bp_view_query_nearest(v, c, k, got_hits, &got_n), BP_OK);
		cr_assert_eq(got_n, want_n);
		for (size_t i = 0; i < want_n; ++i) {
			cr_assert_eq(got_hits[i].index, want_hits[i].index, "dims %d nearest %d: hit %zu", dims, q, i);
			cr_assert_eq(got_hits[i].distance, want_hits[i].distance);
		}
	}
	bp_view_release(v);
	bp_world_destroy(w);
	free(boxes), free(want), free(got), free(seen), free(want_hits), free(got_hits);
}

// A few periods of spread: the images walk the hierarchy. Many: the span holds more
// images than the walk takes, and the view is scanned. Small views have no hierarchy.
Test(query_periodic, hierarchy_3d, .timeout = 120) { run_periodic(3, 2000, 2.0f, false, 81); }
Test(query_periodic, hierarchy_2d_integer, .timeout = 120) { run_periodic(2, 2000, 2.0f, true, 82); }
Test(query_periodic, scanned_3d_integer, .timeout = 120) { run_periodic(3, 1500, 3.0f, true, 83); }
Test(query_periodic, small_view_2d, .timeout = 120) { run_periodic(2, 100, 1.0f, false, 84); }
