// SPDX-License-Identifier: MIT
// The query names before 0.8, kept for one minor release so that older hosts build: each
// passes its arguments to the call that replaced it (frame.h), NULL where it took no filter.
#include <broadphase/frame.h>

bp_status bp_view_query_aabb(const bp_view *v, const float *min, const float *max, uint32_t *out, size_t capacity,
	size_t *total)
{
	return bp_view_overlap_box(v, min, max, NULL, out, capacity, total);
}

bp_status bp_view_query_aabb_filtered(const bp_view *v, const float *min, const float *max,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total)
{
	return bp_view_overlap_box(v, min, max, filter, out, capacity, total);
}

bp_status bp_view_query_point(const bp_view *v, const float *point, uint32_t *out, size_t capacity, size_t *total)
{
	return bp_view_overlap_point(v, point, NULL, out, capacity, total);
}

bp_status bp_view_query_point_filtered(const bp_view *v, const float *point, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total)
{
	return bp_view_overlap_point(v, point, filter, out, capacity, total);
}

bp_status bp_view_query_sphere(const bp_view *v, const float *centre, float radius, uint32_t *out, size_t capacity,
	size_t *total)
{
	return bp_view_overlap_sphere(v, centre, radius, NULL, out, capacity, total);
}

bp_status bp_view_query_sphere_filtered(const bp_view *v, const float *centre, float radius,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total)
{
	return bp_view_overlap_sphere(v, centre, radius, filter, out, capacity, total);
}

bp_status bp_view_raycast_closest(const bp_view *v, const float *origin, const float *dir, float max_t, bp_hit *out,
	bool *found)
{
	bp_status status = bp_view_cast_ray_closest(v, origin, dir, max_t, NULL, out, found);
	if (status != BP_OK && out && found)
		*found = false; // as this function always did
	return status;
}

bp_status bp_view_raycast_closest_filtered(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *out, bool *found)
{
	return bp_view_cast_ray_closest(v, origin, dir, max_t, filter, out, found);
}

bp_status bp_view_raycast_all(const bp_view *v, const float *origin, const float *dir, float max_t, bp_hit *out,
	size_t capacity, size_t *total)
{
	return bp_view_cast_ray(v, origin, dir, max_t, NULL, out, capacity, total);
}

bp_status bp_view_raycast_all_filtered(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *out, size_t capacity, size_t *total)
{
	return bp_view_cast_ray(v, origin, dir, max_t, filter, out, capacity, total);
}

bp_status bp_view_query_nearest(const bp_view *v, const float *point, uint32_t k, bp_hit *out, size_t *count)
{
	return bp_view_nearest(v, point, k, NULL, out, count);
}

bp_status bp_view_query_nearest_filtered(const bp_view *v, const float *point, uint32_t k,
	const bp_query_filter *filter, bp_hit *out, size_t *count)
{
	return bp_view_nearest(v, point, k, filter, out, count);
}

bp_status bp_view_boxcast_closest(const bp_view *v, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bp_hit *out, bool *found)
{
	return bp_view_cast_box_closest(v, min, max, dir, max_t, filter, out, found);
}

bp_status bp_view_boxcast_all(const bp_view *v, const float *min, const float *max, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *out, size_t capacity, size_t *total)
{
	return bp_view_cast_box(v, min, max, dir, max_t, filter, out, capacity, total);
}

bp_status bp_view_visit_aabb(const bp_view *v, const float *min, const float *max, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	return bp_view_visit_overlap_box(v, min, max, filter, visit, user);
}

bp_status bp_view_visit_sphere(const bp_view *v, const float *centre, float radius, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	return bp_view_visit_overlap_sphere(v, centre, radius, filter, visit, user);
}

bp_status bp_view_visit_ray(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user)
{
	return bp_view_visit_cast_ray(v, origin, dir, max_t, filter, visit, user);
}

bp_status bp_view_visit_boxcast(const bp_view *v, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user)
{
	return bp_view_visit_cast_box(v, min, max, dir, max_t, filter, visit, user);
}

bp_status bp_view_raycast_closest_batch(const bp_view *v, const bp_ray *rays, size_t count,
	const bp_query_filter *filter, bp_hit *out)
{
	return bp_view_cast_rays_closest(v, rays, count, filter, out);
}
