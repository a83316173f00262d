// SPDX-License-Identifier: MIT
// Queries in periodic worlds (frame.h, "Periodic worlds"; docs/design.md "Queries") against
// brute force written from the contract: each interval moved into the period cell with fmod
// in double and rounded once to float, then every move of -2 .. 2 periods of either one
// (only -1 .. 1 can matter), each moved bound rounded once. Shapes and entities lie near
// the origin, far from it (up to 1e30) and reach across the whole torus; every query's
// work stays within a few scans of the view.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query_oracle.h"
#include "query/query.h" // bpi_periodic_query_work

/// x moved by whole periods into [0, p): fmod in double, rounded once; p rounds to 0.
static float in_cell(float x, float p)
{
	double r = fmod((double)x, (double)p);
	if (r < 0)
		r += p;
	const float a = (float)r;
	return a < p ? a : 0.0f;
}

/// An interval in the cell: its min moved in, its max that plus the extent in double.
typedef struct cell {
	float lo, hi;
	bool whole; ///< extent >= period: it covers the torus
} cell;

static cell cell_of(float lo, float hi, float p)
{
	const double extent = (double)hi - (double)lo;
	if (extent >= p)
		return (cell){0.0f, 0.0f, true};
	const float a = in_cell(lo, p);
	return (cell){a, (float)((double)a + extent), false};
}

/// x moved down by k periods, rounded once.
static float down(float x, int k, float p)
{
	return (float)((double)x - (double)k * (double)p);
}

/// Whether the spans meet as they are or with either moved down by 1 or 2 periods.
static bool cells_meet(cell q, cell e, float p)
{
	if (q.whole || e.whole)
		return true;
	for (int k = 0; k <= 2; ++k)
		if ((down(q.lo, k, p) <= e.hi && e.lo <= down(q.hi, k, p)) ||
		    (q.lo <= down(e.hi, k, p) && down(e.lo, k, p) <= q.hi))
			return true;
	return false;
}

/// The least gap from c (in the cell) to the span moved by -2 .. 2 periods.
static float cell_gap(float c, cell e, float p)
{
	if (e.whole)
		return 0.0f;
	float best = INFINITY;
	for (int k = -2; k <= 2; ++k) {
		const float lo = down(e.lo, k, p), hi = down(e.hi, k, p);
		const float g = c < lo ? lo - c : c > hi ? c - hi : 0.0f;
		best = g < best ? g : best;
	}
	return best;
}

static float torus_distance2(const oracle_box *b, int dims, const float *period, const float *p)
{
	float g[3] = {0.0f, 0.0f, 0.0f};
	for (int a = 0; a < dims; ++a)
		g[a] = cell_gap(in_cell(p[a], period[a]), cell_of(b->min[a], b->max[a], period[a]), period[a]);
	float d2 = g[0] * g[0] + g[1] * g[1];
	if (dims == 3)
		d2 += g[2] * g[2];
	return d2;
}

/// Brute force: the entities the box [lo, hi] (or the sphere c, r when c is not NULL) meets
/// on the torus, ascending.
static size_t torus_oracle(const oracle_box *boxes, uint32_t n, int dims, const float *period, const float *lo,
	const float *hi, const float *c, float r, uint32_t *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i) {
		bool met = true;
		if (c)
			met = torus_distance2(&boxes[i], dims, period, c) <= r * r;
		for (int a = 0; a < dims && met && !c; ++a)
			met = cells_meet(cell_of(lo[a], hi[a], period[a]), cell_of(boxes[i].min[a], boxes[i].max[a], period[a]),
				period[a]);
		if (met)
			out[count++] = i;
	}
	return count;
}

static int by_distance_then_index(const void *x, const void *y)
{
	const bp_hit *a = x, *b = y;
	if (a->distance != b->distance)
		return a->distance < b->distance ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

/// Brute force: the k nearest on the torus, ties by index.
static size_t torus_nearest_oracle(const oracle_box *boxes, uint32_t n, int dims, const float *period,
	const float *p, uint32_t k, bp_hit *out)
{
	bp_hit *all = malloc((n + 1) * sizeof *all);
	for (uint32_t i = 0; i < n; ++i)
		all[i] = (bp_hit){i, torus_distance2(&boxes[i], dims, period, p)};
	qsort(all, n, sizeof *all, by_distance_then_index);
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

/// Node and entity tests a query may make: the hierarchy's nodes (about two per entity),
/// one test per entity, then a scan.
static uint64_t work_bound(uint32_t n)
{
	return 4ull * n + 64;
}

static uint64_t work_before;

static void work_start(void)
{
	work_before = bpi_periodic_query_work();
}

static void work_check(uint32_t n, const char *what, int q)
{
	const uint64_t work = bpi_periodic_query_work() - work_before;
	cr_assert_leq(work, work_bound(n), "%s %d: %llu tests in a view of %u", what, q, (unsigned long long)work, n);
}

/// A box query and its visitor equal brute force, within the work bound.
static void check_box(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, const float *period,
	const float *lo, const float *hi, int q)
{
	uint32_t *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
	uint32_t *seen = calloc(n + 1, sizeof *seen);
	const size_t want_n = torus_oracle(boxes, n, dims, period, lo, hi, NULL, 0, want);
	size_t got_n = 0;
	work_start();
	cr_assert_eq(bp_view_overlap_box(v, lo, hi, NULL, got, n + 1, &got_n), BP_OK);
	work_check(n, "box", q);
	cr_assert_eq(got_n, want_n, "dims %d box %d: %zu hits, brute force %zu", dims, q, got_n, want_n);
	cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got), "dims %d box %d: other hits", dims, q);
	work_start();
	cr_assert_eq(bp_view_visit_overlap_box(v, lo, hi, NULL, count_visit, seen), BP_OK);
	work_check(n, "visited box", q);
	for (size_t k = 0, at = 0; k < n; ++k) {
		const bool wanted = at < want_n && want[at] == k;
		cr_assert_eq(seen[k], wanted ? 1u : 0u, "box %d visited entity %zu %u times", q, k, seen[k]);
		at += wanted;
	}
	if (want_n > 1) { // a short buffer: the lowest, and the full count
		cr_assert_eq(bp_view_overlap_box(v, lo, hi, NULL, got, 1, &got_n), BP_ERR_OUT_OF_RANGE);
		cr_assert_eq(got_n, want_n);
		cr_assert_eq(got[0], want[0]);
	}
	free(want), free(got), free(seen);
}

/// A sphere query and k nearest equal brute force, within the work bound.
static void check_sphere_nearest(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, const float *period,
	const float *c, float r, uint32_t k, int q)
{
	uint32_t *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
	bp_hit *want_hits = malloc((n + 1) * sizeof *want_hits), *got_hits = malloc((n + 1) * sizeof *got_hits);
	size_t want_n = torus_oracle(boxes, n, dims, period, NULL, NULL, c, r, want), got_n = 0;
	work_start();
	cr_assert_eq(bp_view_overlap_sphere(v, c, r, NULL, got, n + 1, &got_n), BP_OK);
	work_check(n, "sphere", q);
	cr_assert_eq(got_n, want_n, "dims %d sphere %d (r %g): %zu hits, brute force %zu", dims, q, (double)r, got_n,
		want_n);
	cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got), "dims %d sphere %d: other hits", dims, q);
	want_n = torus_nearest_oracle(boxes, n, dims, period, c, k, want_hits);
	work_start();
	cr_assert_eq(bp_view_nearest(v, c, k, NULL, got_hits, &got_n), BP_OK);
	work_check(n, "nearest", q);
	cr_assert_eq(got_n, want_n);
	for (size_t i = 0; i < want_n; ++i) {
		cr_assert_eq(got_hits[i].index, want_hits[i].index, "dims %d nearest %d: hit %zu", dims, q, i);
		cr_assert_eq(got_hits[i].distance, want_hits[i].distance, "dims %d nearest %d: hit %zu", dims, q, i);
	}
	free(want), free(got), free(want_hits), free(got_hits);
}

/// A magnitude from 1e6 to 1e30, either sign.
static float far_coordinate(test_rng *rng)
{
	const float x = powf(10.0f, test_rng_float(rng, 6.0f, 30.0f));
	return test_rng_below(rng, 2) ? -x : x;
}

/// Entities within `spread` periods of the origin (extents up to a third of a period,
/// integer corners when snap: touching across the seam), a tenth far away when far;
/// queries around them, far away and huge when far.
static void run_periodic(int dims, uint32_t n, float spread, bool snap, bool far, uint64_t seed)
{
	const float period[3] = {10.0f, 12.0f, 8.0f};
	oracle_box *boxes = malloc(n * sizeof *boxes);
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int a = 0; a < dims; ++a) {
			boxes[i].min[a] = test_rng_float(&rng, -spread * period[a], spread * period[a]);
			if (far && i % 10 == 0)
				boxes[i].min[a] = far_coordinate(&rng);
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
	for (int q = 0; q < 60; ++q) {
		float lo[3], hi[3], c[3];
		for (int a = 0; a < dims; ++a) {
			lo[a] = test_rng_float(&rng, -3.0f * period[a], 3.0f * period[a]);
			if (far && q % 4 == 1)
				lo[a] = far_coordinate(&rng);
			const float extent = far && q % 6 == 2 ? powf(10.0f, test_rng_float(&rng, 0.0f, 20.0f))
			                     : q % 5 == 0     ? test_rng_float(&rng, 0.0f, 1.5f * period[a])
			                                      : test_rng_float(&rng, 0.0f, period[a] / 3.0f);
			hi[a] = lo[a] + extent;
			if (snap)
				lo[a] = floorf(lo[a]), hi[a] = floorf(hi[a]);
			c[a] = lo[a];
		}
		const float r = far && q % 3 == 0 ? powf(10.0f, test_rng_float(&rng, 0.0f, 30.0f))
		                                  : test_rng_float(&rng, 0.0f, period[0] / 2.0f);
		check_box(v, boxes, n, dims, period, lo, hi, q);
		check_sphere_nearest(v, boxes, n, dims, period, c, r, 1 + (uint32_t)q % 9, q);
	}
	bp_view_release(v);
	bp_world_destroy(w);
	free(boxes);
}

// A few periods of spread: the walk prunes on the torus. Far entities make the hierarchy's
// upper nodes span many periods; far and huge shapes reach every node. Small views have no
// hierarchy and are scanned.
Test(query_periodic, hierarchy_3d, .timeout = 120) { run_periodic(3, 2000, 2.0f, false, false, 81); }
Test(query_periodic, hierarchy_2d_integer, .timeout = 120) { run_periodic(2, 2000, 2.0f, true, false, 82); }
Test(query_periodic, spread_3d_integer, .timeout = 120) { run_periodic(3, 1500, 3.0f, true, false, 83); }
Test(query_periodic, small_view_2d, .timeout = 120) { run_periodic(2, 100, 1.0f, false, false, 84); }
Test(query_periodic, far_3d, .timeout = 120) { run_periodic(3, 2000, 2.0f, false, true, 85); }
Test(query_periodic, far_2d_integer, .timeout = 120) { run_periodic(2, 2000, 1.0f, true, true, 86); }
Test(query_periodic, far_small_view_3d, .timeout = 120) { run_periodic(3, 120, 1.0f, false, true, 87); }

// ---- the shapes that used to loop for ever: period 8, four unit boxes ------------------

static const float unit_period[3] = {8.0f, 8.0f, 8.0f};

/// Four unit boxes; the last at x = far when far is not 0.
static bp_view *four_boxes(oracle_box *boxes, float far, bp_world **w)
{
	for (uint32_t i = 0; i < 4; ++i) {
		boxes[i] = (oracle_box){.min = {2.0f * (float)i, (float)i, 0.5f * (float)i}, .category = 1, .mask = UINT64_MAX};
		for (int a = 0; a < 3; ++a)
			boxes[i].max[a] = boxes[i].min[a] + 1.0f;
	}
	if (far != 0.0f)
		boxes[3].min[0] = far, boxes[3].max[0] = far + 1.0f;
	bp_world_def def = bp_world_def_default();
	def.periodic = true;
	memcpy(def.period, unit_period, sizeof unit_period);
	*w = test_world_from_def(boxes, 4, &def);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(*w, &v), BP_OK, "%s", bp_world_last_error(*w));
	return v;
}

static void check_four_point(float far, const float *p)
{
	oracle_box boxes[4];
	bp_world *w;
	bp_view *v = four_boxes(boxes, far, &w);
	check_box(v, boxes, 4, 3, unit_period, p, p, 0);
	check_sphere_nearest(v, boxes, 4, 3, unit_period, p, 0.0f, 4, 0);
	bp_view_release(v);
	bp_world_destroy(w);
}

Test(query_periodic, point_at_1e17, .timeout = 10)
{
	const float p[3] = {1e17f, 0.5f, 0.5f};
	check_four_point(0.0f, p);
}

Test(query_periodic, nearest_at_1e30, .timeout = 10)
{
	const float p[3] = {1e30f, 0.5f, 0.5f};
	check_four_point(0.0f, p);
}

Test(query_periodic, sphere_of_radius_1e30, .timeout = 10)
{
	oracle_box boxes[4];
	bp_world *w;
	bp_view *v = four_boxes(boxes, 0.0f, &w);
	const float c[3] = {0.5f, 0.5f, 0.5f};
	check_sphere_nearest(v, boxes, 4, 3, unit_period, c, 1e30f, 4, 0);
	bp_view_release(v);
	bp_world_destroy(w);
}

Test(query_periodic, box_of_1e20, .timeout = 10)
{
	oracle_box boxes[4];
	bp_world *w;
	bp_view *v = four_boxes(boxes, 0.0f, &w);
	const float lo[3] = {-1e20f, -1e20f, -1e20f}, hi[3] = {1e20f, 1e20f, 1e20f};
	check_box(v, boxes, 4, 3, unit_period, lo, hi, 0);
	bp_view_release(v);
	bp_world_destroy(w);
}

Test(query_periodic, entity_at_1e30, .timeout = 10)
{
	const float p[3] = {0.5f, 0.5f, 0.5f};
	check_four_point(1e30f, p);
}

/// 1,000 boxes of period 8 and spheres of growing radius: every box, in linear work.
Test(query_periodic, growing_spheres, .timeout = 30)
{
	enum { N = 1000 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	test_rng rng = {88};
	for (uint32_t i = 0; i < N; ++i) {
		boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int a = 0; a < 3; ++a)
			boxes[i].min[a] = test_rng_float(&rng, 0.0f, 8.0f), boxes[i].max[a] = boxes[i].min[a] + 1.0f;
	}
	bp_world_def def = bp_world_def_default();
	def.periodic = true;
	memcpy(def.period, unit_period, sizeof unit_period);
	bp_world *w = test_world_from_def(boxes, N, &def);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	const float c[3] = {4.0f, 4.0f, 4.0f};
	const float radii[] = {1e3f, 1e5f, 1e9f, 1e19f, 3e38f};
	for (int q = 0; q < 5; ++q)
		check_sphere_nearest(v, boxes, N, 3, unit_period, c, radii[q], 3, q);
	bp_view_release(v);
	bp_world_destroy(w);
	free(boxes);
}
