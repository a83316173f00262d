// SPDX-License-Identifier: MIT
// The calls that make an entity a sphere: its bounds become centre -+ radius and its shape
// flag is set; shapes.c holds the test the algorithms apply.
#include "world/world_data.h"

#include <math.h>

void bpi_world_store_shape(bp_world *w, uint32_t d, bool sphere)
{
	uint8_t flags = (uint8_t)((w->soa.flags[d] & ~BP_FLAG_SPHERE) | (sphere ? BP_FLAG_SPHERE : 0));
	if (flags != w->soa.flags[d])
		bpi_world_mark(w, d);
	w->sphere_count -= (w->soa.flags[d] & BP_FLAG_SPHERE) != 0;
	w->soa.flags[d] = flags;
	w->sphere_count += sphere;
}

/// Bounds of a sphere, checked: `name` names it in the error.
static bp_status sphere_bounds(bp_world *w, const float *centre, float radius, bpi_entity_name name, float *min,
	float *max)
{
	char text[64];
	if (!isfinite(radius) || radius < 0.0f)
		return bpi_world_fail(w, isfinite(radius) ? BP_ERR_INVALID_ARGUMENT : BP_ERR_NOT_FINITE,
			"%s: radius is %g (must be finite and >= 0)", bpi_entity_name_text(w, name, text, sizeof text),
			(double)radius);
	for (int axis = 0; axis < w->dims; ++axis) {
		min[axis] = centre[axis] - radius;
		max[axis] = centre[axis] + radius;
	}
	return bpi_world_check_box(w, min, max, name);
}

bp_status bp_entity_set_shape(bp_world *w, bp_entity e, bp_shape shape)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (shape != BP_SHAPE_BOX && shape != BP_SHAPE_SPHERE)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "shape %d is neither box nor sphere", (int)shape);
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	bpi_world_store_shape(w, slot->dense, shape == BP_SHAPE_SPHERE);
	return BP_OK;
}

bp_status bp_entity_set_sphere(bp_world *w, bp_entity e, const float *center, float radius)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (!center)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "center pointer is NULL");
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	float min[3], max[3];
	bp_status status = sphere_bounds(w, center, radius, bpi_name_handle(e), min, max);
	if (status != BP_OK)
		return status;
	bpi_world_store_bounds(w, slot->dense, min, max);
	bpi_world_store_shape(w, slot->dense, true);
	return BP_OK;
}

/// Checks the targets and every sphere, then makes target i sphere i.
static bp_status set_spheres(bp_world *w, const bp_target *t, const bp_sphere_arrays *spheres)
{
	bp_status status = bpi_target_check(w, t);
	if (status != BP_OK)
		return status;
	if (!spheres || !spheres->x || !spheres->y || !spheres->radius || (w->dims == 3 && !spheres->z))
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "sphere arrays: a required array is NULL");
	const float *axes[3] = {spheres->x, spheres->y, spheres->z};
	float min[3], max[3];
	// Check everything first: all or nothing.
	for (uint32_t i = 0; i < t->count; ++i) {
		float centre[3] = {0};
		for (int axis = 0; axis < w->dims; ++axis)
			centre[axis] = axes[axis][i];
		status = sphere_bounds(w, centre, spheres->radius[i], bpi_name_element("spheres", i), min, max);
		if (status != BP_OK)
			return status;
	}
	for (uint32_t i = 0; i < t->count; ++i) {
		for (int axis = 0; axis < w->dims; ++axis) {
			min[axis] = axes[axis][i] - spheres->radius[i];
			max[axis] = axes[axis][i] + spheres->radius[i];
		}
		uint32_t d = bpi_target_dense(w, t, i);
		bpi_world_store_bounds(w, d, min, max);
		bpi_world_store_shape(w, d, true);
	}
	return BP_OK;
}

bp_status bp_entities_set_spheres(bp_world *w, bp_target target, const bp_sphere_arrays *spheres)
{
	return w ? set_spheres(w, &target, spheres) : BP_ERR_INVALID_ARGUMENT;
}
