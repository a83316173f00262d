// SPDX-License-Identifier: MIT
// The query names before 0.8 (frame.h, deprecated until 0.9) against the calls that replaced
// them, on random scenes: each old name must answer exactly as its new call, so that the
// wrappers cannot rot while hosts still build against them.
#define BP_NO_DEPRECATION_WARNINGS
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "oracle.h"

#define N 600
#define RAYS 8

/// What one call gave back: its status, count (or visits), and what it wrote.
typedef struct answer {
	bp_status status;
	size_t n;
	bool found;
	uint32_t ids[N + 1];
	bp_hit hits[N + 1];
} answer;

static answer was, is; // the old name's answer, the new call's

static void start(void)
{
	memset(&was, 0, sizeof was);
	memset(&is, 0, sizeof is);
}

static void same(const char *old_call)
{
	cr_assert_eq(was.status, is.status, "%s: %s, the new call %s", old_call, bp_status_string(was.status),
		bp_status_string(is.status));
	cr_assert_eq(was.n, is.n, "%s: %zu results, the new call %zu", old_call, was.n, is.n);
	cr_assert_eq(was.found, is.found, "%s: found differs", old_call);
	cr_assert(!memcmp(was.ids, is.ids, sizeof was.ids), "%s: other entities", old_call);
	cr_assert(!memcmp(was.hits, is.hits, sizeof was.hits), "%s: other hits", old_call);
}

/// Runs the old call into `was` and the new one into `is`, and checks they agree.
#define SAME(old_call, new_call) (start(), was.status = (old_call), is.status = (new_call), same(#old_call))

static bool visit_id(uint32_t e, void *user)
{
	answer *a = user;
	a->ids[a->n++] = e;
	return true;
}

static bool visit_hit(bp_hit h, void *user)
{
	answer *a = user;
	a->hits[a->n++] = h;
	return true;
}

/// Accepts about half the entities, the same half on every thread.
static bool odd_hash(uint32_t e, void *user)
{
	(void)user;
	return ((e * 2654435761u) >> 16) & 1u;
}

/// NULL, or a filter on layers, kinds and a callback, by turns.
static const bp_query_filter *some_filter(int q, bp_query_filter *f)
{
	if (q % 3 == 0)
		return NULL;
	*f = bp_query_filter_default();
	f->category = test_layer((uint32_t)q % 3);
	f->kinds = 1 + (uint32_t)q % 3;
	f->accept = q % 2 ? odd_hash : NULL;
	return f;
}

static void overlaps_agree(const bp_view *v, const float *lo, const float *hi, float r, const bp_query_filter *f)
{
	SAME(bp_view_query_aabb(v, lo, hi, was.ids, N + 1, &was.n),
		bp_view_overlap_box(v, lo, hi, NULL, is.ids, N + 1, &is.n));
	SAME(bp_view_query_aabb_filtered(v, lo, hi, f, was.ids, N + 1, &was.n),
		bp_view_overlap_box(v, lo, hi, f, is.ids, N + 1, &is.n));
	SAME(bp_view_query_point(v, lo, was.ids, N + 1, &was.n), bp_view_overlap_point(v, lo, NULL, is.ids, N + 1, &is.n));
	SAME(bp_view_query_point_filtered(v, lo, f, was.ids, N + 1, &was.n),
		bp_view_overlap_point(v, lo, f, is.ids, N + 1, &is.n));
	SAME(bp_view_query_sphere(v, lo, r, was.ids, N + 1, &was.n),
		bp_view_overlap_sphere(v, lo, r, NULL, is.ids, N + 1, &is.n));
	SAME(bp_view_query_sphere_filtered(v, lo, r, f, was.ids, N + 1, &was.n),
		bp_view_overlap_sphere(v, lo, r, f, is.ids, N + 1, &is.n));
	SAME(bp_view_visit_aabb(v, lo, hi, f, visit_id, &was), bp_view_visit_overlap_box(v, lo, hi, f, visit_id, &is));
	SAME(bp_view_visit_sphere(v, lo, r, f, visit_id, &was),
		bp_view_visit_overlap_sphere(v, lo, r, f, visit_id, &is));
	SAME(bp_view_query_nearest(v, lo, 7, was.hits, &was.n), bp_view_nearest(v, lo, 7, NULL, is.hits, &is.n));
	SAME(bp_view_query_nearest_filtered(v, lo, 7, f, was.hits, &was.n), bp_view_nearest(v, lo, 7, f, is.hits, &is.n));
}

static void casts_agree(const bp_view *v, const float *lo, const float *hi, const float *d, float max_t,
	const bp_query_filter *f)
{
	SAME(bp_view_raycast_closest(v, lo, d, max_t, was.hits, &was.found),
		bp_view_cast_ray_closest(v, lo, d, max_t, NULL, is.hits, &is.found));
	SAME(bp_view_raycast_closest_filtered(v, lo, d, max_t, f, was.hits, &was.found),
		bp_view_cast_ray_closest(v, lo, d, max_t, f, is.hits, &is.found));
	SAME(bp_view_raycast_all(v, lo, d, max_t, was.hits, N + 1, &was.n),
		bp_view_cast_ray(v, lo, d, max_t, NULL, is.hits, N + 1, &is.n));
	SAME(bp_view_raycast_all_filtered(v, lo, d, max_t, f, was.hits, N + 1, &was.n),
		bp_view_cast_ray(v, lo, d, max_t, f, is.hits, N + 1, &is.n));
	SAME(bp_view_boxcast_closest(v, lo, hi, d, max_t, f, was.hits, &was.found),
		bp_view_cast_box_closest(v, lo, hi, d, max_t, f, is.hits, &is.found));
	SAME(bp_view_boxcast_all(v, lo, hi, d, max_t, f, was.hits, N + 1, &was.n),
		bp_view_cast_box(v, lo, hi, d, max_t, f, is.hits, N + 1, &is.n));
	SAME(bp_view_visit_ray(v, lo, d, max_t, f, visit_hit, &was),
		bp_view_visit_cast_ray(v, lo, d, max_t, f, visit_hit, &is));
	SAME(bp_view_visit_boxcast(v, lo, hi, d, max_t, f, visit_hit, &was),
		bp_view_visit_cast_box(v, lo, hi, d, max_t, f, visit_hit, &is));
}

/// Every old name against its new call on one random scene; one query in five has a
/// NaN corner, so the errors must agree too.
static void run(int dims, uint64_t seed)
{
	static oracle_box boxes[N];
	const float world = dims == 2 ? 60.0f : 20.0f;
	test_random_boxes(boxes, N, dims, world, 3.0f, true, seed);
	bp_world *w = test_world_from_boxes(boxes, N, dims, BP_ALGO_AUTO, 2);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	test_rng rng = {seed};
	bp_ray rays[RAYS];
	for (int q = 0; q < 60; ++q) {
		float lo[3] = {0}, hi[3] = {0}, d[3] = {0};
		test_rng_vec(&rng, lo, dims, 0, world, false);
		test_rng_vec(&rng, d, dims, -1, 1, false);
		for (int k = 0; k < dims; ++k)
			hi[k] = lo[k] + test_rng_float(&rng, 0, 6);
		if (q % 5 == 4)
			lo[0] = NAN;
		const float r = test_rng_float(&rng, 0, 5), max_t = q % 7 ? test_rng_float(&rng, 0, world) : INFINITY;
		bp_query_filter filter;
		const bp_query_filter *f = some_filter(q, &filter);
		overlaps_agree(v, lo, hi, r, f);
		casts_agree(v, lo, hi, d, max_t, f);
		rays[q % RAYS] = (bp_ray){{lo[0], lo[1], lo[2]}, {d[0], d[1], d[2]}, max_t};
		if (q % RAYS == RAYS - 1)
			SAME(bp_view_raycast_closest_batch(v, rays, RAYS, f, was.hits),
				bp_view_cast_rays_closest(v, rays, RAYS, f, is.hits));
	}
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(query_deprecated, old_names_answer_as_the_new_calls_2d, .timeout = 120) { run(2, 71); }
Test(query_deprecated, old_names_answer_as_the_new_calls_3d, .timeout = 120) { run(3, 72); }

/// The one difference the old names keep: bp_view_raycast_closest clears *found on error,
/// where bp_view_cast_ray_closest writes nothing.
Test(query_deprecated, raycast_closest_clears_found_on_error)
{
	static oracle_box boxes[4];
	test_random_boxes(boxes, 4, 2, 10.0f, 3.0f, false, 73);
	bp_world *w = test_world_from_boxes(boxes, 4, 2, BP_ALGO_AUTO, 1);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	const float origin[2] = {NAN, 0}, dir[2] = {1, 0};
	bp_hit hit;
	bool was_found = true, is_found = true;
	cr_assert_eq(bp_view_raycast_closest(v, origin, dir, 1, &hit, &was_found), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_ray_closest(v, origin, dir, 1, NULL, &hit, &is_found), BP_ERR_NOT_FINITE);
	cr_assert(!was_found && is_found);
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);
}
