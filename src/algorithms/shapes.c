// SPDX-License-Identifier: MIT
// The shape test every algorithm applies after the bounds test when a sphere is involved.
// A sphere is read from its bounds (bp_shape), so the store, the snapshots and the
// periodic ghosts need nothing more; world_spheres.c makes entities spheres.
#include "algorithms/index.h"

#include <math.h>

typedef struct ball {
	double centre[3];
	double radius;
} ball;

static ball ball_of(const bpi_scene *s, uint32_t i)
{
	ball b = {.radius = INFINITY};
	for (int axis = 0; axis < s->dims; ++axis) {
		double lo = s->min[axis][i], hi = s->max[axis][i];
		b.centre[axis] = 0.5 * (lo + hi);
		b.radius = fmin(b.radius, 0.5 * (hi - lo));
	}
	return b;
}

/// Squared distance from a point to the box of entity i (0 inside).
static double box_distance2(const bpi_scene *s, uint32_t i, const double *point)
{
	double d2 = 0.0;
	for (int axis = 0; axis < s->dims; ++axis) {
		double lo = s->min[axis][i], hi = s->max[axis][i], p = point[axis];
		double gap = p < lo ? lo - p : p > hi ? p - hi : 0.0;
		d2 += gap * gap;
	}
	return d2;
}

bool bpi_shapes_overlap(const bpi_scene *s, uint32_t a, uint32_t b)
{
	bool sphere_a = s->flags[a] & BP_FLAG_SPHERE, sphere_b = s->flags[b] & BP_FLAG_SPHERE;
	if (sphere_a && sphere_b) {
		ball ba = ball_of(s, a), bb = ball_of(s, b);
		double d2 = 0.0;
		for (int axis = 0; axis < s->dims; ++axis) {
			double d = ba.centre[axis] - bb.centre[axis];
			d2 += d * d;
		}
		double reach = ba.radius + bb.radius;
		return d2 <= reach * reach;
	}
	if (!sphere_a && !sphere_b)
		return true;
	uint32_t sphere = sphere_a ? a : b, box = sphere_a ? b : a;
	ball bs = ball_of(s, sphere);
	return box_distance2(s, box, bs.centre) <= bs.radius * bs.radius;
}
