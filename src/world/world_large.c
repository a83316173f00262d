// SPDX-License-Identifier: MIT
// Large worlds: bounds given in double, taken relative to the world's origin and rounded
// outward to float, so the float box the index sees always holds the double box and no pair
// of the double boxes is ever missed.
#include "world/world_data.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const char axis_names[3] = {'x', 'y', 'z'};

/// The float next to f (finite) toward -infinity (down) or +infinity, by its bits: the
/// same as nextafterf without the call.
static float float_step(float f, bool down)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if (f == 0.0f)
		u = down ? 0x80000001u : 1u; // the smallest subnormal, below or above either zero
	else if ((f > 0.0f) == down)
		u--; // toward zero
	else
		u++; // away from zero
	memcpy(&f, &u, sizeof f);
	return f;
}

/// The largest float <= v (v finite, |v| <= FLT_MAX).
static float round_down(double v)
{
	float f = (float)v;
	return (double)f > v ? float_step(f, true) : f;
}

/// The smallest float >= v (v finite, |v| <= FLT_MAX).
static float round_up(double v)
{
	float f = (float)v;
	return (double)f < v ? float_step(f, false) : f;
}

/// Checks box i of the arrays (finite, min <= max, within float range of the origin); the
/// error names "bounds[i]".
static bp_status check_box(bp_world *w, const bp_bounds_arrays_f64 *b, uint32_t i)
{
	const double *lo[3] = {b->min_x, b->min_y, b->min_z}, *hi[3] = {b->max_x, b->max_y, b->max_z};
	for (int axis = 0; axis < w->dims; ++axis) {
		double l = lo[axis][i], h = hi[axis][i];
		if (!isfinite(l) || !isfinite(h))
			return bpi_world_fail(w, BP_ERR_NOT_FINITE, "bounds[%u]: %s_%c is %g", i, isfinite(l) ? "max" : "min",
				axis_names[axis], isfinite(l) ? h : l);
		if (l > h)
			return bpi_world_fail(w, BP_ERR_INVERTED_BOUNDS, "bounds[%u]: min_%c > max_%c (%.17g > %.17g)", i,
				axis_names[axis], axis_names[axis], l, h);
		l -= w->origin[axis];
		h -= w->origin[axis];
		if (!(fabs(l) <= FLT_MAX && fabs(h) <= FLT_MAX))
			return bpi_world_fail(w, BP_ERR_OUT_OF_RANGE,
				"bounds[%u]: %c [%.17g, %.17g] from the origin is beyond float range", i, axis_names[axis], l, h);
	}
	return BP_OK;
}

/// Box i of the arrays (checked), relative to the origin and rounded outward.
static void outward_box(const bp_world *w, const bp_bounds_arrays_f64 *b, uint32_t i, float min[3], float max[3])
{
	const double *lo[3] = {b->min_x, b->min_y, b->min_z}, *hi[3] = {b->max_x, b->max_y, b->max_z};
	min[2] = max[2] = 0.0f;
	for (int axis = 0; axis < w->dims; ++axis) {
		min[axis] = round_down(lo[axis][i] - w->origin[axis]);
		max[axis] = round_up(hi[axis][i] - w->origin[axis]);
	}
}

static bp_status set_bounds_f64(bp_world *w, const bp_target *t, const bp_bounds_arrays_f64 *b)
{
	bp_status status = bpi_target_check(w, t);
	if (status != BP_OK)
		return status;
	if (!b || !b->min_x || !b->min_y || !b->max_x || !b->max_y || (w->dims == 3 && (!b->min_z || !b->max_z)))
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "bounds arrays: a required array is NULL");
	for (uint32_t i = 0; i < t->count; ++i) // all or nothing: every box checked first
		if ((status = check_box(w, b, i)) != BP_OK)
			return status;
	float min[3], max[3];
	for (uint32_t i = 0; i < t->count; ++i) {
		outward_box(w, b, i, min, max);
		uint32_t d = bpi_target_dense(w, t, i);
		if (w->incremental) { // compares as it stores, so only real changes are marked
			bpi_world_store_bounds(w, d, min, max);
			continue;
		}
		for (int axis = 0; axis < w->dims; ++axis) {
			w->soa.min[axis][d] = min[axis];
			w->soa.max[axis][d] = max[axis];
		}
	}
	return BP_OK;
}

bp_status bp_entities_set_bounds_f64(bp_world *w, bp_target target, const bp_bounds_arrays_f64 *bounds)
{
	return w ? set_bounds_f64(w, &target, bounds) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_origin(bp_world *w, const double *origin)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (!origin)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "origin is NULL");
	for (int axis = 0; axis < w->dims; ++axis)
		if (!isfinite(origin[axis]))
			return bpi_world_fail(w, BP_ERR_NOT_FINITE, "origin_%c is %g", axis_names[axis], origin[axis]);
	for (int axis = 0; axis < 3; ++axis)
		w->origin[axis] = axis < w->dims ? origin[axis] : 0.0;
	return BP_OK;
}

bp_status bp_world_origin(const bp_world *w, double *out)
{
	if (!w || !out)
		return BP_ERR_INVALID_ARGUMENT;
	for (int axis = 0; axis < w->dims; ++axis)
		out[axis] = w->origin[axis];
	return BP_OK;
}
